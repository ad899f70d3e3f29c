package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/strata-dev/strata/controllers/internal/setup"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/ssa"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// sampleChildren is what desired.All builds for the sample pipeline, with the driver's own
// ServiceAccount and RoleBinding.
func sampleChildren(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	p := gen.Pipeline()
	pl, err := plan.Fresh(p, gen.APITiers())
	if err != nil {
		t.Fatal(err)
	}
	return desired.All(desired.Inputs{Pipeline: p, Plan: pl, Tiers: gen.APITiers()})
}

// TestApplyWavesKeepTheOrder: every "before" desired.All documents holds between waves, and
// the waves hold every child once, in desired.All's order within a wave.
func TestApplyWavesKeepTheOrder(t *testing.T) {
	objs := sampleChildren(t)
	wave := map[string]int{}
	n := 0
	for i, w := range waves(objs) {
		last := -1
		for _, o := range w {
			wave[o.GetKind()+"/"+o.GetName()] = i
			pos := indexOf(objs, o)
			if pos < last {
				t.Errorf("wave %d: %s %s out of desired.All's order", i, o.GetKind(), o.GetName())
			}
			last = pos
			n++
		}
	}
	if n != len(objs) {
		t.Fatalf("waves hold %d children, desired.All built %d", n, len(objs))
	}
	kinds := map[string][]string{}
	for k := range wave {
		kind, _, _ := strings.Cut(k, "/")
		kinds[kind] = append(kinds[kind], k)
	}
	before := map[string][]string{
		"ConfigMap":             {"Kafka"},
		"KafkaNodePool":         {"Kafka"},
		"KafkaRebalance":        {"Kafka"},
		"Kafka":                 {"KafkaTopic", "KafkaUser"},
		"Secret":                {"Elasticsearch", "SparkApplication"},
		"Elasticsearch":         {"SparkApplication"},
		"ServiceAccount":        {"SparkApplication"},
		"RoleBinding":           {"SparkApplication"},
		"PersistentVolumeClaim": {"SparkApplication"},
	}
	checked := 0
	for first, thens := range before {
		for _, a := range kinds[first] {
			for _, then := range thens {
				for _, b := range kinds[then] {
					checked++
					if wave[a] >= wave[b] {
						t.Errorf("%s is in wave %d, %s in wave %d: desired.All applies it before", a, wave[a], b, wave[b])
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d orderings checked: the sample lacks the kinds this test is about (%v)", checked, kinds)
	}
}

// TestApplyAllConcurrentWaves: through an API server stand-in, the applies of the first wave
// are in flight together (the first waits, up to a generous ceiling, for a second to arrive),
// no apply of a later wave starts before every apply of an earlier one ended, and a refused
// child leaves the others applied, its error at its own index.
func TestApplyAllConcurrentWaves(t *testing.T) {
	objs := sampleChildren(t)
	var mu sync.Mutex
	inFlight, maxInFlight := 0, 0
	var started []int
	second := make(chan struct{})
	var once sync.Once
	refused := desired.KafkaTopicGVK.Kind
	c := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Apply: func(ctx context.Context, _ client.WithWatch, obj runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
			b, _ := json.Marshal(obj)
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(b); err != nil {
				return err
			}
			mu.Lock()
			inFlight++
			maxInFlight = max(maxInFlight, inFlight)
			started = append(started, applyWave(u.GroupVersionKind()))
			if inFlight == 2 {
				once.Do(func() { close(second) })
			}
			first := len(started) == 1
			mu.Unlock()
			if first {
				select {
				case <-second:
				case <-time.After(5 * time.Minute):
				}
			}
			mu.Lock()
			inFlight--
			mu.Unlock()
			if u.GetKind() == refused {
				return errors.New("refused")
			}
			return nil
		},
	})
	results := applyAll(context.Background(), ssa.New(c, setup.FieldOwner, 64), "test", objs,
		func(ssa.Key) *unstructured.Unstructured { return nil })
	if maxInFlight < 2 {
		t.Errorf("at most %d applies in flight: the first wave's went one after another", maxInFlight)
	}
	for i := 1; i < len(started); i++ {
		if started[i] < started[i-1] {
			t.Errorf("an apply of wave %d started after one of wave %d: %v", started[i], started[i-1], started)
		}
	}
	if len(started) != len(objs) {
		t.Errorf("%d applies sent for %d children", len(started), len(objs))
	}
	for i, o := range objs {
		switch {
		case o.GetKind() == refused && results[i].err == nil:
			t.Errorf("%s %s: the refusal was not returned", o.GetKind(), o.GetName())
		case o.GetKind() != refused && (results[i].err != nil || results[i].live == nil):
			t.Errorf("%s %s: %v, live %v", o.GetKind(), o.GetName(), results[i].err, results[i].live != nil)
		}
	}
}

func indexOf(objs []*unstructured.Unstructured, o *unstructured.Unstructured) int {
	for i := range objs {
		if objs[i] == o {
			return i
		}
	}
	return -1
}
