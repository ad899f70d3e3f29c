package localport

import (
	"net"
	"strconv"
	"testing"
)

// Pick's ports are below the ephemeral range, where no outgoing connection takes one, and free:
// a listener binds each.
func TestPickBelowTheEphemeralRange(t *testing.T) {
	low, _ := ephemeral()
	if low-lowestPort < 1000 {
		t.Skipf("the ephemeral range starts at %d: Pick lets the kernel pick", low)
	}
	seen := map[int]bool{}
	for range 50 {
		addr, err := Pick()
		if err != nil {
			t.Fatal(err)
		}
		port, err := portOf(addr)
		if err != nil {
			t.Fatal(err)
		}
		if port < lowestPort || port >= low {
			t.Fatalf("Pick gave %s, want a port in [%d, %d)", addr, lowestPort, low)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("Pick gave %s, which cannot be bound: %v", addr, err)
		}
		_ = l.Close()
		seen[port] = true
	}
	if len(seen) < 45 {
		t.Errorf("50 picks gave %d ports: not random enough to keep two callers apart", len(seen))
	}
}

// PickPort is the port of an address Pick would give: a number in the range Pick chooses from.
func TestPickPort(t *testing.T) {
	p, err := PickPort()
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || n > 65535 {
		t.Fatalf("PickPort gave %q, want a port number", p)
	}
	if low, _ := ephemeral(); low-lowestPort >= 1000 && (n < lowestPort || n >= low) {
		t.Fatalf("PickPort gave %d, want one in [%d, %d)", n, lowestPort, low)
	}
}

func TestParsePortRange(t *testing.T) {
	for _, c := range []struct {
		in        string
		low, high int
	}{
		{"32768\t60999\n", 32768, 60999},
		{"1024 65535", 1024, 65535},
		{"", 32768, 60999},
		{"60999 32768", 32768, 60999},
		{"a b", 32768, 60999},
	} {
		if low, high := parsePortRange(c.in); low != c.low || high != c.high {
			t.Errorf("parsePortRange(%q) = %d, %d; want %d, %d", c.in, low, high, c.low, c.high)
		}
	}
}

// portOf is addr's port as a number.
func portOf(addr string) (int, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}
