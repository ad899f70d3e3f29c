package lab

import (
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// process is one lab process (proc.Process: logged, and dying with the test binary).
type process = proc.Process

func launch(dir, name string, cmd *exec.Cmd) (*process, error) { return proc.Launch(dir, name, cmd) }

func startDying(cmd *exec.Cmd) error { return proc.StartDying(cmd) }

func start(t testing.TB, dir, name string, cmd *exec.Cmd) *process {
	t.Helper()
	return proc.Start(t, dir, name, cmd)
}

func waitHTTP(client *http.Client, p *process, url string, timeout time.Duration) error {
	return proc.WaitHTTP(client, p, url, timeout)
}

// freePort is a loopback port nothing listened on a moment ago (testutil.FreePort's, as a number
// for the brokers' properties).
func freePort(t testing.TB) int {
	t.Helper()
	_, port, err := net.SplitHostPort(testutil.FreePort(t))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
