package scale

import "testing"

func TestWrites(t *testing.T) {
	text := `# HELP rest_client_requests_total Number of HTTP requests, partitioned by status code, method, and host.
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:1",method="GET"} 500
rest_client_requests_total{code="200",host="127.0.0.1:1",method="PATCH"} 14
rest_client_requests_total{code="201",host="127.0.0.1:1",method="POST"} 3
rest_client_requests_total{code="409",host="127.0.0.1:1",method="PUT"} 2
rest_client_requests_total{code="200",host="127.0.0.1:1",method="DELETE"} 1
rest_client_requests_total_other{method="POST"} 1000
controller_runtime_reconcile_total{controller="analyticspipeline",result="success"} 7
controller_runtime_reconcile_total{controller="analyticspipeline",result="error"} 1
controller_runtime_reconcile_total{controller="storagetier",result="success"} 9
workqueue_depth{controller="analyticspipeline",name="analyticspipeline"} 0
`
	if got := Writes(text); got != 20 {
		t.Errorf("Writes = %v, want 20 (PATCH 14 + POST 3 + PUT 2 + DELETE 1; GET and other metrics not counted)", got)
	}
	if got := Sum(text, "controller_runtime_reconcile_total", `controller="analyticspipeline"`); got != 8 {
		t.Errorf("reconciles = %v, want 8", got)
	}
	if got := Sum(text, "workqueue_depth", `name="analyticspipeline"`); got != 0 {
		t.Errorf("depth = %v, want 0", got)
	}
}

func TestServerWrites(t *testing.T) {
	text := `apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="strata.dev",resource="analyticspipelines",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kafka.strimzi.io",resource="kafkas",scope="resource",subresource="",verb="APPLY",version="v1"} 2
apiserver_request_total{code="409",component="apiserver",dry_run="",group="kafka.strimzi.io",resource="kafkas",scope="resource",subresource="",verb="APPLY",version="v1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} 40
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="cluster",subresource="/healthz",verb="GET",version=""} 9
`
	got := ServerWrites(text)
	want := map[string]float64{"POST configmaps": 7, "PUT analyticspipelines/status": 3, "APPLY kafkas": 3}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if got := label(`{xverb="GET",verb="PUT"}`, "verb"); got != "PUT" {
		t.Errorf("label matched inside another label's name: %q", got)
	}
}
