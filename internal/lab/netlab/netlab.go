package netlab

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Link caps a host's traffic; 0 leaves a direction unshaped.
type Link struct {
	SendBytesPerSecond, ReceiveBytesPerSecond int64
}

// HostSpec names a host and its link.
type HostSpec struct {
	Name string
	Link Link
}

// Lab is a set of hosts on one bridge.
type Lab struct {
	Hosts map[string]*Host
	// Hub is the namespace of the bridge itself, at the subnet's first address: a process run
	// there (Prometheus) reaches every host, unshaped, and the test reaches it through
	// Hub.HTTPClient.
	Hub *Host

	id   string
	made []string // the namespaces made, removed in reverse when the test ends
}

// Host is one network namespace with one interface, eth0, on the lab's bridge.
type Host struct {
	Name string
	// NS is the network namespace's name (ip netns), IP the address of eth0.
	NS, IP string
}

// subnet is private to each lab: every lab has its own bridge in its own namespace, so two labs
// (two tests, two CI runs) never see each other's addresses.
const subnet = "10.231.0"

var labs atomic.Int32

// New creates the hosts, each in a namespace of its own, linked to a bridge in a hub namespace
// through a veth pair shaped as its spec says, and removes them all when the test ends. It skips
// the test where the machine does not allow it (not root, no iproute2).
func New(t testing.TB, hosts ...HostSpec) *Lab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("netlab: not root: the shaped links (network namespaces, tc) are not checked; run as root to check them")
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("netlab: %s (iproute2) is missing: the shaped links are not checked", tool)
		}
	}
	if len(hosts) > 200 {
		t.Fatalf("netlab: %d hosts, at most 200 fit the lab's subnet", len(hosts))
	}
	id := fmt.Sprintf("s%d-%d", os.Getpid()%100000, labs.Add(1))
	l := &Lab{Hosts: map[string]*Host{}, Hub: &Host{Name: "hub", NS: "strata-" + id + "-hub", IP: subnet + ".1"}, id: id}
	hub := l.Hub.NS
	t.Cleanup(func() {
		for i := len(l.made) - 1; i >= 0; i-- {
			if err := ip("netns", "del", l.made[i]); err != nil {
				t.Logf("netlab: %v", err)
			}
		}
	})
	must := func(err error) {
		if err != nil {
			t.Fatalf("netlab: %v", err)
		}
	}
	must(ip("netns", "add", hub))
	l.made = append(l.made, hub)
	must(ip("-n", hub, "link", "add", "br0", "type", "bridge"))
	must(ip("-n", hub, "addr", "add", l.Hub.IP+"/24", "dev", "br0"))
	must(ip("-n", hub, "link", "set", "br0", "up"))
	must(ip("-n", hub, "link", "set", "lo", "up"))
	for _, spec := range hosts {
		l.Add(t, spec)
	}
	return l
}

// Add creates one more host on the lab's bridge, shaped as spec says: a machine that joins
// later, as a new broker's node does.
func (l *Lab) Add(t testing.TB, spec HostSpec) *Host {
	t.Helper()
	if _, dup := l.Hosts[spec.Name]; dup || spec.Name == "" {
		t.Fatalf("netlab: host name %q empty or given twice", spec.Name)
	}
	i := len(l.Hosts)
	if i >= 200 {
		t.Fatalf("netlab: %d hosts, at most 200 fit the lab's subnet", i+1)
	}
	must := func(err error) {
		if err != nil {
			t.Fatalf("netlab: %v", err)
		}
	}
	hub := l.Hub.NS
	h := &Host{Name: spec.Name, NS: fmt.Sprintf("strata-%s-%d", l.id, i), IP: fmt.Sprintf("%s.%d", subnet, i+2)}
	must(ip("netns", "add", h.NS))
	l.made = append(l.made, h.NS)
	// Interface names are at most 15 bytes; the host side is renamed eth0 in its namespace.
	inner, outer := fmt.Sprintf("v%si", l.id), fmt.Sprintf("v%s-%d", l.id, i)
	if len(outer) > 15 {
		outer = fmt.Sprintf("vh%d", i)
	}
	if len(inner) > 15 {
		inner = "vtmp"
	}
	must(ip("link", "add", inner, "netns", h.NS, "type", "veth", "peer", "name", outer, "netns", hub))
	must(ip("-n", h.NS, "link", "set", inner, "name", "eth0"))
	must(ip("-n", h.NS, "addr", "add", h.IP+"/24", "dev", "eth0"))
	must(ip("-n", h.NS, "link", "set", "eth0", "up"))
	must(ip("-n", h.NS, "link", "set", "lo", "up"))
	must(ip("-n", hub, "link", "set", outer, "master", "br0"))
	must(ip("-n", hub, "link", "set", outer, "up"))
	// What leaves the host's eth0 is what it sends; what leaves the hub's end toward it is
	// what it receives. tbf shapes only egress, so each direction is shaped where it leaves.
	must(shape(h.NS, "eth0", spec.Link.SendBytesPerSecond))
	must(shape(hub, outer, spec.Link.ReceiveBytesPerSecond))
	l.Hosts[spec.Name] = h
	return h
}

// shape caps an interface's egress with a token bucket filter. The burst holds 10 ms at the rate
// and at least one 64 KiB segment (veth passes GSO segments of that size).
func shape(ns, dev string, bytesPerSecond int64) error {
	if bytesPerSecond <= 0 {
		return nil
	}
	burst := max(bytesPerSecond/100, 64<<10)
	return tc("-n", ns, "qdisc", "add", "dev", dev, "root", "tbf",
		"rate", fmt.Sprintf("%dbit", bytesPerSecond*8), "burst", fmt.Sprint(burst), "latency", "100ms")
}

func ip(args ...string) error { return run("ip", args...) }
func tc(args ...string) error { return run("tc", args...) }

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Command runs a program inside the host's namespace (ip netns exec): it sees only eth0 and lo.
func (h *Host) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Do runs fn on an OS thread inside the host's namespace. Sockets fn opens belong to the host and
// stay usable from any goroutine afterwards. The thread is never returned to the Go scheduler:
// it ends with fn's goroutine, namespace and all.
func (h *Host) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // not unlocked on purpose, see above
		f, err := os.Open(filepath.Join("/var/run/netns", h.NS))
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("entering %s: %w", h.NS, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// HTTPClient is a client whose connections are opened inside the host's namespace, for the test
// to reach a server that listens there.
func (h *Host) HTTPClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
			err = h.Do(func() error {
				c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
				return err
			})
			return c, err
		},
	}}
}

// Counters are the bytes the host's interface received and sent since it was made.
type Counters struct{ Received, Sent uint64 }

// Counters reads the host's interface counters, the ones cAdvisor reports for a pod.
func (h *Host) Counters() (Counters, error) {
	out, err := exec.Command("ip", "-n", h.NS, "-s", "-j", "link", "show", "dev", "eth0").Output()
	if err != nil {
		return Counters{}, fmt.Errorf("reading %s's counters: %w", h.Name, err)
	}
	var links []struct {
		Stats64 struct {
			Rx struct{ Bytes uint64 } `json:"rx"`
			Tx struct{ Bytes uint64 } `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		return Counters{}, fmt.Errorf("reading %s's counters: %v in %s", h.Name, err, out)
	}
	return Counters{Received: links[0].Stats64.Rx.Bytes, Sent: links[0].Stats64.Tx.Bytes}, nil
}
