// Package tier is the StorageTier controller: a local tier's StorageClass and one local
// PersistentVolume per matching node and path, Released volumes wiped before they are offered
// again, the volumes of a lost node let go of; a dynamic tier's StorageClass checked. Its
// Reconcile has the pipeline controller's shape: a scope (tier_scope.go), a table of steps,
// and the status written once on every exit, only when it changed.
package tier
