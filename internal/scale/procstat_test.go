package scale

import (
	"os"
	"testing"
)

func TestParseUsage(t *testing.T) {
	status := "Name:\tmanager\nVmPeak:\t 2000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t12\n"
	// A command name with a space and a ')' in it: fields are counted after the last ')'.
	stat := "4242 (man ager)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 12 0 100 0 0"
	u, err := parseUsage(status, stat)
	if err != nil {
		t.Fatal(err)
	}
	if u.PeakRSS != 200<<20 || u.RSS != 100<<20 || u.CPUTicks != 1234+567 {
		t.Errorf("got %+v, want peak 200 MiB, rss 100 MiB, 1801 ticks", u)
	}
	if got := u.CPUSeconds(); got != 18.01 {
		t.Errorf("CPU seconds %v, want 18.01", got)
	}
	for _, bad := range []struct{ status, stat string }{
		{"VmRSS:\t1 kB\n", stat},
		{"VmHWM:\t1 MB\nVmRSS:\t1 kB\n", stat},
		{status, "4242 manager S 1"},
		{status, "4242 (manager) S 1 2 3"},
	} {
		if _, err := parseUsage(bad.status, bad.stat); err == nil {
			t.Errorf("parseUsage(%q, %q) took it", bad.status, bad.stat)
		}
	}
}

// TestReadUsageSelf reads this test process: whatever its figures, they are positive.
func TestReadUsageSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc (not Linux): ReadUsage not checked: %v", err)
	}
	u, err := ReadUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.PeakRSS <= 0 || u.RSS <= 0 || u.PeakRSS < u.RSS {
		t.Errorf("got %+v", u)
	}
}
