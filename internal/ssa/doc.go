// Package ssa is the one server-side-apply path of every Strata controller: it applies an
// object with one field manager, and skips the request when it would change nothing.
//
// It follows Cluster API's internal/util/ssa: a cache remembers, per object, the hash of what
// was last applied and the resourceVersion the server answered with; while both still match,
// nobody has changed the object since and the apply is skipped. The cache is bounded (an LRU)
// and a controller clears the entries of an owner (a pipeline, a tier) when it is deleted.
//
// With nothing cached (after a restart, or an eviction) the live object is compared instead:
// it must hold every field of the desired one with the same value, and every field the field
// manager owns on it (its managedFields entry, read with structured-merge-diff's fieldpath as
// Cluster API does) must still be in the desired object. A field dropped from the desired
// object is therefore removed after a restart too: the apply that drops it is sent.
package ssa
