package upstream

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// startControllerManager runs kube-controller-manager with its default controllers: the
// PersistentVolume binder (claims bind to Strata's local PVs once the scheduler picks a node,
// WaitForFirstConsumer), StatefulSets (ECK's and the Spark driver's children), the garbage
// collector (owner references followed as in a cluster), namespaces, ServiceAccounts and the
// kube-root-ca.crt ConfigMap every pod's API access volume projects. The ServiceAccount key is
// the API server's (envtest writes the pair to its certificate directory).
func startControllerManager(t testing.TB, dir, kubeconfig, certDir, caFile string) *proc.Process {
	t.Helper()
	args := append(componentFlags(t, kubeconfig),
		flag("controllers", "*"),
		flag("use-service-account-credentials", "false"),
		flag("service-account-private-key-file", filepath.Join(certDir, "sa-signer.key")),
		flag("root-ca-file", caFile),
		// No cloud: nodes carry their own topology labels.
		flag("cloud-provider", "external"),
		flag("concurrent-statefulset-syncs", "5"))
	return run(t, dir, "kube-controller-manager", nil, append([]string{tool(t, "kube-controller-manager")}, args...)...)
}

// startScheduler runs kube-scheduler with its default profile: spread, affinity, taints and
// volume binding decide where pods go, as in a cluster.
func startScheduler(t testing.TB, dir, kubeconfig string) *proc.Process {
	t.Helper()
	return run(t, dir, "kube-scheduler", nil, append([]string{tool(t, "kube-scheduler")}, componentFlags(t, kubeconfig)...)...)
}

// componentFlags are what kube-controller-manager and kube-scheduler share: the admin
// kubeconfig for everything, no leader election (one of each runs), and a secure port of their
// own on loopback.
func componentFlags(t testing.TB, kubeconfig string) []string {
	return []string{
		flag("kubeconfig", kubeconfig),
		flag("authentication-kubeconfig", kubeconfig),
		flag("authorization-kubeconfig", kubeconfig),
		flag("leader-elect", "false"),
		flag("bind-address", "127.0.0.1"),
		flag("secure-port", testutil.FreePortNumber(t)),
	}
}

// KWOKNodeLabel selects the nodes KWOK manages: every node the harness makes.
const KWOKNodeLabel = "type"

// startKWOK runs KWOK over the harness's nodes with the stages hack/tools.sh puts beside it
// (node/fast, node/heartbeat-with-lease, pod/fast): nodes become Ready and stay so, a scheduled
// pod becomes Running and Ready at once, a deleted one goes.
func startKWOK(t testing.TB, dir, kubeconfig string) *proc.Process {
	t.Helper()
	bin := tool(t, "kwok")
	stages := filepath.Join(filepath.Dir(bin), "stages.yaml")
	if _, err := os.Stat(stages); err != nil {
		t.Fatalf("KWOK's stages: %v (hack/tools.sh path kwok writes them)", err)
	}
	wipes := filepath.Join(dir, "kwok-volume-cleanup.yaml")
	if err := os.WriteFile(wipes, []byte(cleanupStage), 0o644); err != nil {
		t.Fatal(err)
	}
	return run(t, dir, "kwok", nil, bin,
		flag("kubeconfig", kubeconfig),
		flag("config", stages),
		flag("config", wipes),
		flag("manage-all-nodes", "false"),
		flag("manage-nodes-with-label-selector", KWOKNodeLabel+"=kwok"),
		flag("node-lease-duration-seconds", "40"),
		flag("cidr", "10.244.0.1/16"),
		flag("node-ip", "10.0.0.1"),
		flag("server-address", "127.0.0.1:"+testutil.FreePortNumber(t)),
	)
}

// cleanupStage completes Strata's volume cleanup pods once they run, as the wipe script exits 0
// on an emptied volume (internal/desired/cleanuppod.go): KWOK's pod/fast stages complete only a
// Job's pods, and a bare pod would otherwise run forever and its volume never be recycled.
const cleanupStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: strata-volume-cleanup-complete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.labels["app.kubernetes.io/component"]'
      operator: 'In'
      values:
      - 'volume-cleanup'
  next:
    statusTemplate: |
      {{ $now := Now }}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
`
