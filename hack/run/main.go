// Command run is `make run`: it starts a local control plane (etcd and kube-apiserver built by
// hack/tools.sh) with Strata's and the upstream CRDs, runs the operator against it, applies
// config/samples, and prints the pipelines and tiers as `kubectl get` would, until Ctrl-C or
// SIGTERM stops everything. With STRATA_USE_EXISTING_CLUSTER=1 it uses the current kubeconfig's
// cluster instead. -once exits after the samples are printed (CI uses it as a smoke test).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/internal/controlplane"
)

func main() {
	once := flag.Bool("once", false, "exit after the samples are applied and printed")
	wait := flag.Duration("wait", 2*time.Minute, "how long to wait for the samples to be reconciled")
	flag.Parse()
	// make does not pass SIGTERM on to its children: ask the kernel to signal us when make dies.
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *once, *wait); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "make run:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, once bool, wait time.Duration) error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	say("starting the control plane and installing the CRDs")
	env, err := controlplane.Start(ctx)
	if err != nil {
		return err
	}
	defer func() {
		say("stopping the control plane")
		if err := env.Stop(); err != nil {
			say("stopping the control plane: %v", err)
		}
	}()
	kubeconfig := filepath.Join(root, "bin", "run", "kubeconfig")
	if env.Existing {
		kubeconfig = "" // the user's own kubeconfig
	} else if err := writeKubeconfig(kubeconfig, env.KubeConfig); err != nil {
		return err
	}
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		return err
	}
	if !env.Existing {
		if err := createFixtures(ctx, c); err != nil {
			return err
		}
	}

	manager, err := startManager(ctx, root, kubeconfig)
	if err != nil {
		return err
	}
	defer stopProcess(manager)

	samples, err := controlplane.Samples()
	if err != nil {
		return err
	}
	say("applying config/samples")
	for _, s := range samples {
		if err := apply(ctx, c, s); err != nil {
			return fmt.Errorf("applying %s %s: %w", s.GetKind(), s.GetName(), err)
		}
	}
	waitReconciled(ctx, c, samples, wait)
	if err := printTables(ctx, env.Config); err != nil {
		return err
	}
	if err := printChildren(ctx, c, samples); err != nil {
		return err
	}
	if kubeconfig != "" {
		say("the control plane is yours while this runs:\n\n    kubectl --kubeconfig %s get analyticspipelines,storagetiers -A\n", relative(root, kubeconfig))
	}
	if once {
		return nil
	}
	say("the operator is running; Ctrl-C stops it and the control plane")
	done := make(chan error, 1)
	go func() { done <- manager.Wait() }()
	select {
	case <-ctx.Done():
		return nil
	case err := <-done:
		return fmt.Errorf("the operator exited: %v", err)
	}
}

func writeKubeconfig(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, content, 0o600)
}

// startManager builds and starts cmd/manager against the control plane, in the foreground's
// process group (so Ctrl-C reaches it) and set to die with us.
func startManager(ctx context.Context, root, kubeconfig string) (*exec.Cmd, error) {
	bin := filepath.Join(root, "bin", "manager")
	say("building the operator")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/manager")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building the operator: %w", err)
	}
	args := []string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}
	if kubeconfig != "" {
		args = append(args, "--kubeconfig="+kubeconfig)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	say("starting the operator: bin/manager %v", args)
	return cmd, cmd.Start()
}

// stopProcess asks the process to stop, and kills it if it has not after ten seconds.
func stopProcess(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _, _ = cmd.Process.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
	}
}

// apply server-side applies a sample, as `kubectl apply --server-side` would.
func apply(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("strata-samples"), client.ForceOwnership)
}

func relative(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return rel
	}
	return path
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "==> "+format+"\n", args...)
}
