package intern

import "sync"

// maxEntries bounds the table: a pipeline's children bring a dozen distinct names (the
// pipeline's, its node pools', its users' and secrets'), so 32,768 keep every name of 2,000
// pipelines besides the field names and labels their children share; about 3 MB when full. A
// full table is dropped and started afresh (clear): the strings already shared stay shared,
// the table only stops handing out the old copies. This keeps it bounded however many distinct
// values pass (user labels, deleted objects' names) without tracking which are still held.
const maxEntries = 32768

// maxLength is the longest string shared: field names, label keys and values, names, API
// versions are short; a long value (an annotation holding a document) is seldom repeated and
// would hold the table's memory for nothing.
const maxLength = 128

// table holds the shared copy of each string, as a string and as an interface value: an
// unstructured object holds its values as `any`, and a string boxed in an interface is an
// allocation of its own, shared too.
type table struct {
	mu      sync.Mutex
	strings map[string]any
}

var shared = &table{strings: make(map[string]any, 1024)}

// maxTextBytes bounds the texts shared (Text): a ConfigMap's document is a few kB, the same in
// every pipeline (the Kafka metrics exporter's rules); 4 MB hold a thousand distinct ones. Past
// it the texts' table starts afresh, as the strings' does.
const maxTextBytes = 4 << 20

// texts is the table of long strings, bounded by their bytes rather than their number.
var texts = struct {
	sync.Mutex
	byContent map[string]string
	bytes     int
}{byContent: map[string]string{}}

// boxed is the shared interface value holding s (s itself when s is not shared).
func (t *table) boxed(s string) any {
	if len(s) > maxLength {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.strings[s]; ok {
		return v
	}
	if len(t.strings) >= maxEntries {
		clear(t.strings)
	}
	var v any = s
	t.strings[s] = v
	return v
}

// String is the shared copy of s.
func String(s string) string { return shared.boxed(s).(string) }

// Value is the shared copy of v when it is a string, v otherwise.
func Value(v any) any {
	if s, ok := v.(string); ok {
		return shared.boxed(s)
	}
	return v
}

// Text is the shared copy of a long string, such as a document a ConfigMap holds.
func Text(s string) string {
	if len(s) <= maxLength {
		return String(s)
	}
	if len(s) > maxTextBytes/16 { // one text may not take more than a sixteenth of the table
		return s
	}
	texts.Lock()
	defer texts.Unlock()
	if c, ok := texts.byContent[s]; ok {
		return c
	}
	if texts.bytes+len(s) > maxTextBytes {
		clear(texts.byContent)
		texts.bytes = 0
	}
	texts.byContent[s] = s
	texts.bytes += len(s)
	return s
}
