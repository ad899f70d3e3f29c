package desired

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/strata-dev/strata/internal/testutil"
)

// dictionaryMax bounds the dictionary: internal/ssa's zstd window (128 kB) holds it and a
// child's text. The split-tiers children make 58 kB.
const dictionaryMax = 96 << 10

// TestPackDictionary builds internal/ssa's compression dictionary (pack.dict) from what the
// operator packs of the split-tiers case's children (docs/api.md's example, as the samples):
// each child as the cache packs it (its spec and its field manager's entry, ssa.Pack) and as
// the applier remembers it (the request). The children a cache keeps packed come last, where
// the compressor finds them at the shortest distances, the largest last of all. A dictionary
// that no longer matches what the builders make still decompresses what it compressed; it only
// compresses less, so it is
// kept current like a golden file: `go test ./internal/desired -run TestPackDictionary -update`.
func TestPackDictionary(t *testing.T) {
	var in Inputs
	for _, tc := range testCases(t) {
		if tc.name == "split-tiers" {
			in = tc.in
		}
	}
	var typed, packed [][]byte
	for _, u := range All(in) {
		whole, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		switch u.GetAPIVersion() {
		case "v1", "rbac.authorization.k8s.io/v1": // cached typed: only the applier keeps them
			typed = append(typed, whole)
		default:
			packed = append(packed, append(whole, asPacked(t, u)...))
		}
	}
	slices.SortStableFunc(packed, func(a, b []byte) int { return len(a) - len(b) })
	dict := bytes.Join(append(typed, packed...), nil)
	if len(dict) > dictionaryMax {
		dict = dict[len(dict)-dictionaryMax:]
	}
	testutil.Golden(t, "../ssa/pack.dict", dict)
}

// asPacked is the JSON ssa.Pack keeps of u once the API server has it: everything but its
// apiVersion, kind and metadata, and its field manager's entry with the field set as text
// (ssa.Compact). The set is what the object holds, as structured-merge-diff lists it.
func asPacked(t *testing.T, u *unstructured.Unstructured) []byte {
	t.Helper()
	fields, err := fieldpath.SetFromValue(value.NewValueInterface(u.Object)).ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	rest := map[string]any{"metadata": map[string]any{"managedFields": []any{map[string]any{
		"apiVersion": u.GetAPIVersion(), "fieldsType": "FieldsV1", "manager": "strata", "operation": "Apply",
		"strata.dev/fieldsV1": string(fields), "time": "2026-01-01T00:00:00Z"}}}}
	for k, v := range u.Object {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			rest[k] = v
		}
	}
	b, err := json.Marshal(rest)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
