package intern

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// children are the desired children of the golden scenarios, decoded as an informer would
// (each from its own JSON, so that no two share a string), with the fields the API server adds.
func children(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob("../desired/testdata/*.golden.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden children: %v", err)
	}
	var out []*unstructured.Unstructured
	for i, f := range files {
		y, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(y, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		u.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i)))
		u.SetResourceVersion(fmt.Sprint(1000 + i))
		u.SetCreationTimestamp(metav1.Now())
		out = append(out, decoded(t, u))
	}
	return out
}

// decoded is u as a watch decodes it: every string its own.
func decoded(t testing.TB, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	b, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameBytes(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestMetadataChangesNoValue(t *testing.T) {
	for _, u := range children(t) {
		want := u.DeepCopy()
		if _, err := Metadata(u); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(want.Object, u.Object) {
			t.Errorf("%s %s changed", u.GetKind(), u.GetName())
		}
		if _, err := Metadata(u); err != nil || !equality.Semantic.DeepEqual(want.Object, u.Object) {
			t.Errorf("%s %s: a second pass changed it (%v)", u.GetKind(), u.GetName(), err)
		}
	}
}

func TestMetadataSharesWhatRepeats(t *testing.T) {
	cs := children(t)
	a, b := cs[0], decoded(t, cs[0])
	for _, u := range []*unstructured.Unstructured{a, b} {
		if _, err := Metadata(u); err != nil {
			t.Fatal(err)
		}
	}
	metaA, metaB := a.Object["metadata"].(map[string]any), b.Object["metadata"].(map[string]any)
	keyOf := func(m map[string]any, want string) string {
		for k := range m {
			if k == want {
				return k
			}
		}
		t.Fatalf("no key %q", want)
		return ""
	}
	if !sameBytes(keyOf(metaA, "labels"), keyOf(metaB, "labels")) {
		t.Error(`the key "labels" of two objects is not one copy`)
	}
	la, lb := metaA["labels"].(map[string]any), metaB["labels"].(map[string]any)
	for k := range la {
		if !sameBytes(keyOf(la, k), keyOf(lb, k)) || !sameBytes(la[k].(string), lb[k].(string)) {
			t.Errorf("label %s of two objects is not one copy", k)
		}
	}
	if !sameBytes(a.GetAPIVersion(), b.GetAPIVersion()) || !sameBytes(a.GetName(), b.GetName()) {
		t.Error("apiVersion or name of two objects is not one copy")
	}
	if sameBytes(metaA["resourceVersion"].(string), metaB["resourceVersion"].(string)) {
		t.Error("resourceVersion, unique to an object, was shared")
	}
	refA, refB := a.GetOwnerReferences(), b.GetOwnerReferences()
	ownerUID := func(m map[string]any) string {
		return m["ownerReferences"].([]any)[0].(map[string]any)["uid"].(string)
	}
	if len(refA) == 0 || len(refB) == 0 || !sameBytes(ownerUID(metaA), ownerUID(metaB)) {
		t.Error("the owner's uid, the same on all its children, was not shared")
	}
}

func TestMetadataTyped(t *testing.T) {
	pod := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace:       string([]byte("web")),
			Labels:          map[string]string{string([]byte("strata.dev/pipeline")): string([]byte("clicks"))},
			OwnerReferences: []metav1.OwnerReference{{Kind: string([]byte("AnalyticsPipeline")), UID: types.UID([]byte("u-1"))}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: string([]byte("strata")), Operation: metav1.ManagedFieldsOperationApply}},
		}}
	}
	a, b := pod(), pod()
	want := a.DeepCopy()
	for _, p := range []*corev1.Pod{a, b} {
		if _, err := Metadata(p); err != nil {
			t.Fatal(err)
		}
	}
	if !equality.Semantic.DeepEqual(want, a) {
		t.Error("the pod changed")
	}
	for k := range a.Labels {
		for k2 := range b.Labels {
			if !sameBytes(k, k2) || !sameBytes(a.Labels[k], b.Labels[k2]) {
				t.Error("the label is not one copy")
			}
		}
	}
	if !sameBytes(a.Namespace, b.Namespace) || !sameBytes(string(a.OwnerReferences[0].UID), string(b.OwnerReferences[0].UID)) ||
		!sameBytes(a.ManagedFields[0].Manager, b.ManagedFields[0].Manager) {
		t.Error("namespace, owner uid or manager not one copy")
	}
	if out, err := Metadata("a tombstone"); err != nil || out != "a tombstone" {
		t.Errorf("an object of another type: %v, %v", out, err)
	}
}

func TestTableIsBounded(t *testing.T) {
	long := string(make([]byte, maxLength+1))
	if sameBytes(String(long), String(string([]byte(long)))) {
		t.Error("a string longer than maxLength was shared")
	}
	for i := 0; i < 3*maxEntries; i++ {
		String(fmt.Sprint("value-", i))
		if n := func() int { shared.mu.Lock(); defer shared.mu.Unlock(); return len(shared.strings) }(); n > maxEntries {
			t.Fatalf("the table holds %d strings, more than %d", n, maxEntries)
		}
	}
	if s := String(string([]byte("after"))); s != "after" || !sameBytes(s, String(string([]byte("after")))) {
		t.Error("a table started afresh shares no more")
	}
}

func TestConfigMapDocumentsShared(t *testing.T) {
	doc := strings.Repeat("rules:\n- pattern: kafka.server<type=(.+)>\n", 40)
	cm := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "web"},
			Data: map[string]string{"kafka-metrics-config.yml": string([]byte(doc))}}
	}
	a, b := cm(), cm()
	for _, c := range []*corev1.ConfigMap{a, b} {
		if _, err := Metadata(c); err != nil {
			t.Fatal(err)
		}
	}
	if a.Data["kafka-metrics-config.yml"] != doc || !sameBytes(a.Data["kafka-metrics-config.yml"], b.Data["kafka-metrics-config.yml"]) {
		t.Error("two ConfigMaps' equal documents are not one copy")
	}
	huge := strings.Repeat("x", maxTextBytes/16+1)
	if sameBytes(Text(huge), Text(string([]byte(huge)))) {
		t.Error("a text over the limit was shared")
	}
	for i := 0; i < 2*maxTextBytes/len(doc); i++ {
		Text(fmt.Sprint(i, doc))
		if texts.bytes > maxTextBytes {
			t.Fatalf("the texts' table holds %d bytes, more than %d", texts.bytes, maxTextBytes)
		}
	}
}
