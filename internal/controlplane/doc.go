// Package controlplane starts a real Kubernetes control plane (etcd and kube-apiserver, through
// controller-runtime's envtest) with Strata's CRDs and the upstream CRDs of Strimzi, the Spark
// operator, ECK and the Prometheus Operator installed, so that tests and `make run` validate
// every object the operator builds against the real schemas. It also finds those CRDs and the
// control plane binaries, and says how to get them when they are missing.
package controlplane
