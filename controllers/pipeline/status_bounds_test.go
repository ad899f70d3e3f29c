package pipeline

import (
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/status"
)

// TestConditionMessageBounded: a failed submission whose errorMessage (spark-submit's output)
// is longer than a condition's message may be gives a SparkReady message within the API's limit,
// so that the status patch is not refused whole; and the event announcing it fits an event's
// note. Before the fix the message went through whole.
func TestConditionMessageBounded(t *testing.T) {
	trace := "Exception in thread \"main\" io.fabric8.kubernetes.client.KubernetesClientException: é\n" +
		strings.Repeat("\tat io.fabric8.kubernetes.client.dsl.internal.OperationSupport.waitForResult(OperationSupport.java:509)\n", 400)
	app := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"applicationState": map[string]any{
		"state": "SUBMISSION_FAILED", "errorMessage": trace}}}}
	app.SetName("sensors")
	st := sparkStatus(app)
	if len(st.message) <= status.MaxConditionMessage {
		t.Fatalf("the test's errorMessage is %d bytes: not over the limit", len(st.message))
	}
	var list []metav1.Condition
	c := status.Conditions{List: &list, Generation: 1}
	c.Set(v1alpha1.ConditionSparkReady, st.status, st.reason, st.message)
	got := list[0].Message
	if len(got) > status.MaxConditionMessage || !utf8.ValidString(got) || !strings.HasSuffix(got, status.TruncatedMark) ||
		!strings.HasPrefix(got, "SparkApplication SUBMISSION_FAILED: Exception") {
		t.Errorf("SparkReady's message: %d bytes, valid UTF-8 %v, begins %q, ends %q",
			len(got), utf8.ValidString(got), got[:40], got[len(got)-20:])
	}

	rec := events.NewFakeRecorder(1)
	status.AnnounceTransitions(rec, &v1alpha1.AnalyticsPipeline{}, nil, list)
	note := <-rec.Events
	// The fake recorder prefixes the type, reason and action: "Warning ApplicationFailed SparkReady ".
	if _, body, _ := strings.Cut(note, "SparkReady SparkReady="); len(body)+len("SparkReady=") > status.MaxEventNote {
		t.Errorf("the event's note is %d bytes, over %d", len(body)+len("SparkReady="), status.MaxEventNote)
	}
}
