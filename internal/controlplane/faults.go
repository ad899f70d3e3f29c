package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
)

// RestartAPIServer stops kube-apiserver (SIGTERM, as a rolling restart of a control plane node
// does) and starts it again on the same etcd, port and certificates, and returns once it is
// healthy. etcd keeps running: nothing stored is lost, only every connection and watch.
//
// envtest's APIServer.Stop removes a certificate directory it made itself (controller-runtime
// v0.24.1, pkg/internal/testing/controlplane/apiserver.go, Stop: "reset the directory if it was
// randomly allocated") and Start would then make a new CA, serving certificate and
// ServiceAccount signing key: every client's CA and token would be refused, which no real
// restart does. So the directory is copied first and the new process is given the copy: its
// populateAPIServerCerts keeps certificates already there, and the client CA (CertAuthn) is kept
// in memory and written again by Start. It returns how long the old process took to stop and
// the new one to answer its health check.
//
// With crash, the old process is killed with SIGKILL first, as a node's loss or the OOM killer
// ends it: no request drained, every connection cut at once. Without, it is stopped with SIGTERM
// and drains for up to a minute, as a rolling restart does.
func (e *Env) RestartAPIServer(crash bool) (stopped, started time.Duration, err error) {
	if e.Existing {
		return 0, 0, errors.New("restarting the API server of an existing cluster: not the test's to do")
	}
	s := e.env.ControlPlane.APIServer
	kept, err := os.MkdirTemp("", "k8s_test_framework_restarted_")
	if err != nil {
		return 0, 0, err
	}
	if err := copyDir(s.CertDir, kept); err != nil {
		return 0, 0, fmt.Errorf("keeping the API server's certificates: %w", err)
	}
	begin := time.Now()
	if crash {
		if err := kill(s.CertDir); err != nil {
			return 0, 0, err
		}
	}
	if err := stopAPIServer(s, crash); err != nil {
		return 0, 0, fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	stopped = time.Since(begin)
	// Not removed by envtest (it did not make it): removed when the whole control plane stops.
	e.kept = append(e.kept, kept)
	s.CertDir = kept
	begin = time.Now()
	if err := s.Start(); err != nil {
		return stopped, 0, fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	// envtest waits for /healthz only; /readyz also waits for the API server's informers (RBAC's
	// among them), as a load balancer in front of a real one does: before, the manager's first
	// requests are answered forbidden.
	if err := e.waitReady(2 * time.Minute); err != nil {
		return stopped, time.Since(begin), err
	}
	return stopped, time.Since(begin), nil
}

// stopAPIServer is envtest's Stop of s; after kill, again while it answers ESRCH. envtest's
// Stop signals the process unless the goroutine waiting on it has marked it exited, and that
// goroutine marks it only after Cmd.Wait has reaped it (controller-runtime v0.24.1,
// pkg/internal/testing/process/process.go: Start's waiter, Exited, Stop), while kill returns
// once the process is reaped: between the two, Stop signals a process that is gone, "no such
// process". A loaded machine widens that moment (TestRestartAPIServerExpiresWatches failed so
// once in a fresh clone's .ci/run); once marked, Stop has nothing to signal and returns nil.
func stopAPIServer(s interface{ Stop() error }, killed bool) error {
	err := s.Stop()
	for deadline := time.Now().Add(time.Minute); killed && errors.Is(err, syscall.ESRCH) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		err = s.Stop()
	}
	return err
}

// waitReady waits until kube-apiserver's /readyz answers ok, or fails after timeout.
func (e *Env) waitReady(timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver not ready %s after it started: %w", timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kill ends the kube-apiserver whose --cert-dir is certDir with SIGKILL and waits until it is
// gone (envtest reaps it), so that envtest's Stop finds it exited. envtest keeps its process to
// itself: it is found by its command line.
func kill(certDir string) error {
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return err
	}
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if filepath.Base(args[0]) != "kube-apiserver" || !slices.Contains(args, "--cert-dir="+certDir) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err != nil {
			return err
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return fmt.Errorf("killing kube-apiserver (pid %d): %w", pid, err)
		}
		for deadline := time.Now().Add(time.Minute); syscall.Kill(pid, 0) == nil; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				return fmt.Errorf("kube-apiserver (pid %d) still there a minute after SIGKILL", pid)
			}
		}
		return nil
	}
	return fmt.Errorf("no kube-apiserver process with --cert-dir=%s", certDir)
}

func copyDir(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, en := range entries {
		if en.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, en.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, en.Name()), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// CompactEtcd compacts etcd's history up to its current revision, as kube-apiserver does every
// --etcd-compaction-interval (5 minutes by default), and returns that revision: a watch asked to
// start before it can no longer be served from etcd ("required revision has been compacted",
// which kube-apiserver answers 410 Gone, "too old resource version"), and a client must list
// again. Through etcd's JSON gateway (etcd v3.6, server/etcdserver/api/v3rpc gateway
// /v3/kv/range and /v3/kv/compaction, on its client URL), so that no etcd client module is
// needed.
func (e *Env) CompactEtcd(ctx context.Context) (int64, error) {
	if e.Existing {
		return 0, errors.New("compacting the etcd of an existing cluster: not the test's to do")
	}
	base := e.env.ControlPlane.Etcd.URL.String()
	var head struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	// A range over a key nobody writes: its answer's header carries the current revision.
	if err := post(ctx, base+"/v3/kv/range", map[string]any{"key": "AA=="}, &head); err != nil {
		return 0, err
	}
	rev, err := strconv.ParseInt(head.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd's revision %q: %w", head.Header.Revision, err)
	}
	if err := post(ctx, base+"/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}, nil); err != nil {
		return 0, err
	}
	return rev, nil
}

func post(ctx context.Context, url string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", url, resp.Status, answer)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}
