package scale

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Usage is what /proc says a process has used so far.
type Usage struct {
	// PeakRSS and RSS are the resident set's high-water mark (VmHWM) and current size (VmRSS),
	// in bytes.
	PeakRSS, RSS int64
	// CPUTicks is user plus system time in clock ticks (utime+stime of /proc/PID/stat).
	CPUTicks int64
}

// clockTicks is USER_HZ: 100 on every Linux architecture Go supports (sysconf(_SC_CLK_TCK) is
// fixed by the kernel's ABI, include/uapi/asm-generic/param.h).
const clockTicks = 100

// CPUSeconds is the CPU time in seconds.
func (u Usage) CPUSeconds() float64 { return float64(u.CPUTicks) / clockTicks }

// ReadUsage reads pid's usage from /proc.
func ReadUsage(pid int) (Usage, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, err
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, err
	}
	return parseUsage(string(status), string(stat))
}

// parseUsage reads VmHWM and VmRSS from a /proc/PID/status and utime and stime from a
// /proc/PID/stat (fields 14 and 15, counted after the command name, which may hold spaces and
// parentheses: proc(5) says to split after its last ')').
func parseUsage(status, stat string) (Usage, error) {
	var u Usage
	found := 0
	for _, line := range strings.Split(status, "\n") {
		for prefix, dst := range map[string]*int64{"VmHWM:": &u.PeakRSS, "VmRSS:": &u.RSS} {
			rest, ok := strings.CutPrefix(line, prefix)
			if !ok {
				continue
			}
			f := strings.Fields(rest)
			if len(f) != 2 || f[1] != "kB" {
				return u, fmt.Errorf("%s %q: not a size in kB", prefix, rest)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return u, fmt.Errorf("%s %q: %w", prefix, rest, err)
			}
			*dst = kb << 10
			found++
		}
	}
	if found != 2 {
		return u, fmt.Errorf("status holds no VmHWM or VmRSS")
	}
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return u, fmt.Errorf("stat %q: no command name", stat)
	}
	// After ") " come field 3 (state) onwards: utime is field 14, stime 15.
	f := strings.Fields(stat[end+1:])
	if len(f) < 13 {
		return u, fmt.Errorf("stat %q: too few fields", stat)
	}
	for _, s := range f[11:13] {
		t, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return u, fmt.Errorf("stat %q: %w", stat, err)
		}
		u.CPUTicks += t
	}
	return u, nil
}
