package proc

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is one program started beside a test, its output in a log file the test prints when it fails.
type Process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// Launch runs cmd, logging to dir/name.log.
func Launch(dir, name string, cmd *exec.Cmd) (*Process, error) {
	p := &Process{name: name, cmd: cmd, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := StartDying(cmd); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	return p, nil
}

// StartDying starts cmd so that it is killed when the test binary dies: a test binary stopped by
// a signal (a timeout, ^C) runs no cleanup, and brokers left running starve the next run of CPU.
// Linux sends the parent-death signal when the thread that started the process exits, and the Go
// runtime lets a thread exit when a goroutine locked to it ends (netlab's Host.Do does so on
// purpose), so every process is started from one goroutine locked to a thread that never ends.
func StartDying(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawns = make(chan spawn)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread must live as long as the binary
			for sp := range spawns {
				sp.done <- sp.cmd.Start()
			}
		}()
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	done := make(chan error, 1)
	spawns <- spawn{cmd, done}
	return <-done
}

type spawn struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawns    chan spawn
)

// Start runs cmd, logging to dir/name.log, and stops it when the test ends.
func Start(t testing.TB, dir, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	p, err := Launch(dir, name, cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.End(t) })
	return p
}

// End kills the process if it still runs (the test is over: no grace period to wait out) and,
// when the test failed, logs the end of its log.
func (p *Process) End(t testing.TB) {
	if p.Running() {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	if t.Failed() {
		if b, err := os.ReadFile(p.log); err == nil {
			t.Logf("%s log (last 4 KiB):\n%s", p.name, Tail(b, 4096))
		}
	}
}

func Tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Running says whether the process has not exited.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Pause freezes the process (SIGSTOP), as a job stalled in a long GC or on a dead disk: it
// holds its connections and does nothing.
func (p *Process) Pause() { _ = p.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume lets a paused process go on (SIGCONT).
func (p *Process) Resume() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

// Stop ends the process as the kubelet ends a container: SIGTERM, then SIGKILL after a grace
// period (30 s, the pods' default).
func (p *Process) Stop() {
	if !p.Running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// WaitHTTP waits until url answers 200 to client or the process exits.
func WaitHTTP(client *http.Client, p *Process, url string, timeout time.Duration) error {
	began := time.Now()
	deadline := began.Add(timeout)
	last := "no answer yet"
	for time.Now().Before(deadline) {
		if !p.Running() {
			return fmt.Errorf("%s exited %s after the wait for %s began (log %s)", p.name, time.Since(began).Round(time.Second), url, p.log)
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("%s: %s did not answer 200 within %s (last: %s; log %s)", p.name, url, timeout, last, p.log)
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Name is the name the process was started under; its log is LogFile.
func (p *Process) Name() string { return p.name }

// LogFile is the file the process's output goes to.
func (p *Process) LogFile() string { return p.log }
