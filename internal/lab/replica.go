package lab

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/strata-dev/strata/internal/testutil"
)

// Replica is one more manager process of the Operator's, beside its own: as the chart's
// Deployment runs replicaCount pods, each with its own ports, all with the same arguments and
// ServiceAccount. Replicas with leader election make a leader and standbys; the Operator's own
// process (Restart, Kill) is unaffected by them.
type Replica struct {
	// Name names the replica and its log (<Name>.log in the Operator's directory).
	Name string
	// Probe and Metrics are its health-probe and metrics addresses (loopback ports of its own).
	Probe, Metrics string

	proc *process
}

// ReplicaOptions say how a replica differs from the Operator's process.
type ReplicaOptions struct {
	// Server, when set, is the address (https://host:port) the replica reaches the API server at
	// instead of the control plane's: a proxy of the test's that sees every request the replica
	// makes (which a shared API server cannot tell apart: the replicas share a ServiceAccount,
	// a user agent and a field manager).
	Server string
	// ServerCA is the PEM certificate that verifies Server.
	ServerCA []byte
	// Args are added to the Operator's arguments (a later flag wins: --leader-elect=false).
	Args []string
}

// StartReplica starts a replica named name and waits until it is ready (its caches synced,
// leader or not: controller-runtime starts the caches before it campaigns). It is killed when
// the test that ran RunOperator ends, like the Operator's own process.
func (o *Operator) StartReplica(t testing.TB, name string, opts ReplicaOptions) *Replica {
	t.Helper()
	r := &Replica{Name: name, Probe: testutil.FreePort(t), Metrics: testutil.FreePort(t)}
	replace := map[string]string{"--metrics-bind-address": r.Metrics, "--health-probe-bind-address": r.Probe}
	if opts.Server != "" {
		kc := filepath.Join(o.dir, name+".kubeconfig")
		cfg := rest.CopyConfig(o.Config)
		cfg.Host, cfg.CAData = opts.Server, opts.ServerCA
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := WriteKubeconfig(ctx, o.clientset, cfg, o.chart.Pod.Namespace, o.chart.ServiceAccount, kc); err != nil {
			t.Fatal(err)
		}
		replace["--kubeconfig"] = kc
	}
	args := slices.Clone(o.args)
	for i, a := range args {
		flag, _, _ := strings.Cut(a, "=")
		if v, ok := replace[flag]; ok {
			args[i] = flag + "=" + v
		}
	}
	p, err := launch(o.dir, name, exec.Command(o.bin, append(args, opts.Args...)...))
	if err != nil {
		t.Fatal(err)
	}
	o.owner.Cleanup(func() { p.End(o.owner) })
	r.proc = p
	if err := waitHTTP(http.DefaultClient, p, "http://"+r.Probe+"/readyz", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	return r
}

// Kill ends the replica with SIGKILL (no lease released) and returns once it is gone.
func (r *Replica) Kill() {
	if r.proc.Running() {
		_ = syscall.Kill(r.proc.Pid(), syscall.SIGKILL)
		<-r.proc.Done()
	}
}

// Stop ends the replica as the kubelet ends a pod: SIGTERM (the manager releases its lease),
// SIGKILL after 30 s.
func (r *Replica) Stop() { r.proc.Stop() }

// Pause freezes the replica (SIGSTOP): it holds its connections and does nothing, as a process
// stalled by a long GC pause, a throttled cgroup or a frozen VM.
func (r *Replica) Pause() { r.proc.Pause() }

// Resume lets a paused replica go on (SIGCONT).
func (r *Replica) Resume() { r.proc.Resume() }

// Running says whether the replica has not exited.
func (r *Replica) Running() bool { return r.proc.Running() }

// Done is closed when the replica has exited.
func (r *Replica) Done() <-chan struct{} { return r.proc.Done() }

// LogFile is the file the replica logs to.
func (r *Replica) LogFile() string { return r.proc.LogFile() }

func (r *Replica) String() string { return fmt.Sprintf("%s (pid %d)", r.Name, r.proc.Pid()) }
