package lab

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The executors' disk series (container_fs_reads_bytes_total, container_fs_writes_bytes_total)
// are cAdvisor's reading of each cgroup's block I/O statistics. On cgroup v2 the kernel counts
// every cgroup's I/O in io.stat, which is what Kubernetes nodes run (from 1.35 the kubelet's
// failCgroupV1 is true by default, KEP-5573). On cgroup v1 (this machine, kernel 6.18)
// blkio.throttle.io_service_bytes counts a cgroup's I/O on a device only while the cgroup has a
// throttle rule for that device: 64 MiB of direct writes and reads by a process in a fresh
// cgroup leave it at "Total 0", and the same with a rule that limits nothing count 64 MiB each
// way. So the lab gives each cgroup it makes such a rule (unlimitedBPS on the disk holding the
// lab's files), to count I/O as cgroup v2 does without limiting it.
//
// One difference remains: cgroup v1 charges buffered writes to whoever writes them back (the
// kernel's flusher threads), cgroup v2 to the cgroup that dirtied the pages. The lab's disk load
// writes with O_DIRECT, which both charge to the writer.

// unlimitedBPS is a throttle rule's bytes per second that no disk here reaches (100 GiB/s).
const unlimitedBPS = 100 << 30

// wholeDisk is the major:minor of the disk holding path (the disk, not a partition of it:
// throttle rules name whole disks), or an error when path is on no block device (tmpfs,
// overlayfs).
func wholeDisk(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", err
	}
	major, minor := unix.Major(st.Dev), unix.Minor(st.Dev)
	if major == 0 {
		return "", fmt.Errorf("%s is on no block device (device %d:%d)", path, major, minor)
	}
	dev := fmt.Sprintf("%d:%d", major, minor)
	sys := filepath.Join("/sys/dev/block", dev)
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		// /sys/dev/block/<maj:min> links to .../block/<disk>/<partition>.
		target, err := filepath.EvalSymlinks(sys)
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(target), "dev"))
		if err != nil {
			return "", err
		}
		dev = strings.TrimSpace(string(b))
	}
	return dev, nil
}

// countIO gives the blkio cgroup dir a throttle rule on device that limits nothing, so that the
// kernel counts the cgroup's I/O on it (cgroup v1; see above).
func countIO(dir, device string) error {
	rule := fmt.Sprintf("%s %d", device, int64(unlimitedBPS))
	for _, f := range []string{"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(rule), 0o644); err != nil {
			return fmt.Errorf("counting the I/O of cgroup %s: %w", dir, err)
		}
	}
	return nil
}

// DiskLoad starts a process in pod's container that writes and reads a 256 MiB file in dir with
// direct I/O (past the page cache, to the disk), writing about writeMiB and reading readMiB MiB
// each second, as an executor that spills and reads back its spill files from disk does. The
// file is rewritten in place, so the disk does not fill. It runs until the test ends or Stop.
func (c *CAdvisor) DiskLoad(t testing.TB, dir, pod string, writeMiB, readMiB int) *process {
	t.Helper()
	if c.device == "" {
		t.Fatal("DiskLoad: the lab's cgroups count no I/O (no block device found for the lab's files)")
	}
	file, gate := filepath.Join(dir, pod+"-disk-load"), filepath.Join(dir, pod+"-disk-load.go")
	// The loop starts once the gate exists: by then the process is in the pod's cgroup, so all
	// of its I/O is the pod's.
	script := fmt.Sprintf(`while [ ! -e %[1]q ]; do sleep 0.1; done
dd if=/dev/zero of=%[2]q bs=1M count=256 oflag=direct 2>/dev/null
while :; do
  dd if=/dev/zero of=%[2]q bs=1M count=%[3]d oflag=direct conv=notrunc 2>/dev/null
  dd if=%[2]q of=/dev/null bs=1M count=%[4]d iflag=direct 2>/dev/null
  sleep 1
done`, gate, file, min(writeMiB, 256), min(readMiB, 256))
	p := start(t, dir, pod+"-disk-load", exec.Command("sh", "-c", script))
	if err := c.join(p.Pid(), pod); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
