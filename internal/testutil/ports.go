package testutil

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Ports for the processes a test starts (Kafka brokers, search nodes, exporters), which bind
// them themselves some time after the test chose them.
//
// A port the kernel picks for a listen on port 0 is one of its ephemeral range
// (net.ipv4.ip_local_port_range), the range every outgoing connection of every process on the
// machine takes its local port from. Released and bound again later by the process started, it
// could meanwhile be taken by any connection, and the process then fails to start: a lab broker
// did once ("Socket server failed to bind to 127.0.0.1:38939: Address already in use") while
// `make test`'s packages and other builds ran beside it. So the ports are chosen at random below
// that range, where no connection is given one and only another listener can take it.

// lowestPort is the lowest port chosen: above the registered ports most services use.
const lowestPort = 10000

// ephemeral is the kernel's ephemeral port range, read once; Linux's default where it cannot be
// read.
var ephemeral = sync.OnceValues(func() (int, int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768, 60999
	}
	return parsePortRange(string(b))
})

// parsePortRange reads ip_local_port_range's "low high"; Linux's default for anything else.
func parsePortRange(s string) (low, high int) {
	f := strings.Fields(s)
	if len(f) == 2 {
		l, err1 := strconv.Atoi(f[0])
		h, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil && 0 < l && l <= h && h < 65536 {
			return l, h
		}
	}
	return 32768, 60999
}

// FreePort is a loopback address with a port free a moment ago, below the ephemeral range (see
// above), for a process the test starts. Where the range leaves fewer than a thousand ports
// below it, or none of a hundred tries is free, the kernel picks.
func FreePort(t testing.TB) string {
	t.Helper()
	if low, _ := ephemeral(); low-lowestPort >= 1000 {
		for range 100 {
			port := lowestPort + rand.IntN(low-lowestPort)
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				continue
			}
			addr := l.Addr().String()
			_ = l.Close()
			return addr
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// FreePortNumber is FreePort's port alone, for a flag that takes a port.
func FreePortNumber(t testing.TB) string {
	t.Helper()
	_, port, err := net.SplitHostPort(FreePort(t))
	if err != nil {
		t.Fatal(err)
	}
	return port
}
