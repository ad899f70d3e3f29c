package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/autoscale"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/desired"
)

// indexingSaturated sends the lab's search node more concurrent bulk requests than its write
// thread pool and queue hold, as a job outgrowing its data nodes does: the node rejects writes
// (429), the real exporter's elasticsearch_thread_pool_rejected_count{type="write"} rises and
// StrataElasticsearchIndexingSaturated fires for the pipeline. The autoscaler's indexing-rate
// query sees the documents indexed meanwhile.
func indexingSaturated(t *testing.T, ctx context.Context, l *Lab) {
	const alert = "StrataElasticsearchIndexingSaturated"
	if r := l.Prometheus.Query(ctx, fmt.Sprintf(`ALERTS{alertname=%q}`, alert)); r.Err != nil || len(r.Series) != 0 {
		t.Fatalf("%s before the load: %v, want silent", alert, r)
	}
	body := bulkBody("lab-load", 200)
	var accepted, rejected atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 * (l.Search.WriteThreads + l.Search.WriteQueue) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				switch saturated, err := bulk(l.Search.URL, body); {
				case err != nil:
					time.Sleep(100 * time.Millisecond)
				case saturated:
					rejected.Add(1)
				default:
					accepted.Add(1)
				}
			}
		}()
	}
	began := time.Now()
	r, ok := l.WaitAlert(ctx, alert, "firing", 3*time.Minute)
	close(stop)
	wg.Wait()
	t.Logf("bulk requests: %d accepted, %d with rejected writes", accepted.Load(), rejected.Load())
	if !ok {
		t.Fatalf("%s not firing %s into the load: %v", alert, time.Since(began).Round(time.Second), r)
	}
	if got := r.Series[0].Labels; got["namespace"] != PipelineNamespace || got["pipeline"] != l.Pipeline.Name {
		t.Errorf("%s fires for %v, want the lab's pipeline", alert, got)
	}
	t.Logf("%s firing %s into the load", alert, time.Since(began).Round(time.Second))
	if rejected.Load() == 0 {
		t.Errorf("the node rejected no write, yet %s fires", alert)
	}

	queries, err := autoscaleprom.Queries(l.Pipeline)
	if err != nil {
		t.Fatal(err)
	}
	q := queries[autoscale.ElasticsearchIndexingRate]
	if r := l.Prometheus.Query(ctx, q); r.Err != nil || len(r.Series) != 1 || r.Series[0].Value <= 0 {
		t.Errorf("%s after %d accepted bulk requests: %v, want > 0", q, accepted.Load(), r)
	}

	// The pipeline's job had its own bulk writes rejected meanwhile. Its client backs off for
	// about 10 s and Spark retries a failed task 3 times; a longer saturation fails its query,
	// and the job is submitted again from its checkpoint (as the Spark operator's restart
	// policy does). Either way it catches up once the load is gone, nothing lost.
	stopped := time.Now()
	// Behind: what arrived while the load ran and a restart took, or the lag measured now if more
	// (a scenario before this one may have left some, or the job was behind before the load).
	backlog := (stopped.Sub(began) + desired.RestartRetryInterval*time.Second).Seconds() * float64(l.Pipeline.Spec.Workload.MessagesPerSecond)
	if r := l.Prometheus.Query(ctx, queries[autoscale.ConsumerLag]); r.Err == nil && len(r.Series) == 1 {
		backlog = max(backlog, r.Series[0].Value+desired.RestartRetryInterval*float64(l.Pipeline.Spec.Workload.MessagesPerSecond))
	}
	if r, ok := l.WaitCaughtUp(ctx, l.CatchUpTimeout(backlog)); !ok {
		t.Errorf("the job did not catch up within %s of the load stopping (running: %t, restarted %d times), want its lag under %g: %v",
			l.CatchUpTimeout(backlog), l.Job.Running(), l.Job.Restarts(), l.CaughtUpLag(), r)
	} else {
		t.Logf("the job is %g records behind %s after the load stopped (restarted %d times)",
			r.Series[0].Value, time.Since(stopped).Round(time.Second), l.Job.Restarts())
	}
}

// bulkBody is a _bulk request indexing n small documents into index.
func bulkBody(index string, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"index":{"_index":%q}}`+"\n", index)
		doc, _ := json.Marshal(map[string]any{"i": i, "v": string(bytes.Repeat([]byte("x"), 200))})
		b.Write(doc)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// bulk sends one bulk request and says whether the node rejected it or any of its writes: 429
// for the request, or items with status 429 (a shard's write rejected by the full thread pool).
func bulk(url string, body []byte) (saturated bool, err error) {
	resp, err := http.Post(url+"/_bulk", "application/x-ndjson", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, err
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return true, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("bulk: %s: %s", resp.Status, b)
	}
	return bytes.Contains(b, []byte(`"status":429`)), nil
}
