// Package intern shares the strings the operator's informers hold many times over.
//
// Decoding a watch event allocates every string of the object anew: an unstructured child's
// metadata is a tree of maps whose keys ("metadata", "labels", "app.kubernetes.io/component",
// "ownerReferences", "blockOwnerDeletion") and most values (the managed-by label, the owner's
// kind and API version, the pipeline's name on each of its children) repeat in every object of
// the cache. With 1,000 pipelines the informers held about 9,000 unstructured children whose
// decoded metadata was most of what they cost (docs/performance.md). Metadata, a cache
// transform, replaces those strings with one shared copy each, from a bounded table.
package intern
