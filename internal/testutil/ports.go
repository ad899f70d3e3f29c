package testutil

import (
	"testing"

	"github.com/strata-dev/strata/internal/localport"
)

// FreePort is a loopback address with a port free a moment ago, below the kernel's ephemeral
// range, for a process the test starts (localport says why).
func FreePort(t testing.TB) string {
	t.Helper()
	addr, err := localport.Pick()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// FreePortNumber is FreePort's port alone, for a flag that takes a port.
func FreePortNumber(t testing.TB) string {
	t.Helper()
	port, err := localport.PickPort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
