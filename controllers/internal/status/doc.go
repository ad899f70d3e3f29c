// Package status is how every Strata controller writes what it observed: conditions set
// without touching an unchanged one's lastTransitionTime, messages bounded to what the API
// admits, an event for each condition that changed and none otherwise, and a status written
// once, only when it changed. It is shared by the pipeline, tier and autoscaling controllers
// (controllers/pipeline, controllers/tier, controllers/autoscaling), which import nothing of
// each other.
package status
