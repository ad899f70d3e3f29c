package localport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

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

// below is the ephemeral range's first port, and whether it leaves at least a thousand ports
// above lowestPort for Pick to choose from.
func below() (int, bool) {
	low, _ := ephemeral()
	return low, low-lowestPort >= 1000
}

// Chosen tells whether port is one Pick chooses when it does not leave the choice to the kernel:
// below the ephemeral range and at least lowestPort.
func Chosen(port int) bool {
	low, ok := below()
	return ok && lowestPort <= port && port < low
}

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

// Pick is a loopback address ("127.0.0.1:port") with a port free a moment ago, below the
// ephemeral range (see doc.go). Where the range leaves fewer than a thousand ports below it, or
// none of a hundred tries is free, the kernel picks.
func Pick() (string, error) {
	if low, ok := below(); ok {
		for range 100 {
			port := lowestPort + rand.IntN(low-lowestPort)
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				continue
			}
			addr := l.Addr().String()
			_ = l.Close()
			return addr, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("picking a loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// PickPort is Pick's port alone, for a flag or a field that takes a port.
func PickPort() (string, error) {
	addr, err := Pick()
	if err != nil {
		return "", err
	}
	_, port, err := net.SplitHostPort(addr)
	return port, err
}
