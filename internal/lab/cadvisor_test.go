package lab

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/lab/netlab"
)

// TestCAdvisorServesPodsAsTheKubelet runs hack/lab-cadvisor (as root) for a process in a netlab
// host and checks what the queries read of it (internal/alerts/promql.go): the network counters
// of the pod's own interface, and memory and disk series, labelled namespace, pod and container
// as the kubelet labels them. In `make test`; the shaped-link scenario is in `make lab`.
func TestCAdvisorServesPodsAsTheKubelet(t *testing.T) {
	nl := netlab.New(t, netlab.HostSpec{Name: "pod"}) // skips without root
	dir := t.TempDir()
	c := StartCAdvisor(t, dir)
	h := nl.Hosts["pod"]
	proc := start(t, dir, "pod", h.Command("sleep", "600"))
	c.Add(t, proc.Pid(), "lab", "lab-lab-broker-0", "kafka")

	// 1 MiB sent from the pod's namespace to the hub: its eth0 transmits at least that much.
	const sent = 1 << 20
	if err := h.Do(func() error {
		// Unconnected: nothing listens on the discard port, and the ICMP answers must not stop
		// the writes.
		conn, err := net.ListenPacket("udp", ":0")
		if err != nil {
			return err
		}
		defer conn.Close()
		to := &net.UDPAddr{IP: net.ParseIP(nl.Hub.IP), Port: 9}
		buf := make([]byte, 1024)
		for range sent / len(buf) {
			if _, err := conn.WriteTo(buf, to); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	b := scrape(t, "http://"+c.Pod.Address+"/metrics/cadvisor")
	labels := `container="kafka",id="/strata-lab/lab-lab-broker-0",image="",interface="eth0",name="lab-lab-broker-0_kafka",namespace="lab",pod="lab-lab-broker-0"`
	tx := sample(t, b, "container_network_transmit_bytes_total{"+labels+"}")
	if tx < sent {
		t.Errorf("container_network_transmit_bytes_total = %g after %d bytes sent from the pod, want at least that", tx, sent)
	}
	sample(t, b, "container_network_receive_bytes_total{"+labels+"}")
	for _, name := range []string{"container_memory_cache", "container_memory_working_set_bytes"} {
		sample(t, b, name+`{container="kafka",id="/strata-lab/lab-lab-broker-0",image="",name="lab-lab-broker-0_kafka",namespace="lab",pod="lab-lab-broker-0"}`)
	}

	// Direct I/O by a process in the pod's container is the pod's disk reads and writes (the lab
	// makes cgroup v1 count them as cgroup v2 does, disk.go).
	if c.device == "" {
		t.Log("the lab's files are on no block device: the containers' disk counters are not checked")
		return
	}
	c.DiskLoad(t, dir, "lab-lab-broker-0", 8, 16)
	deadline := time.Now().Add(20 * time.Second)
	for {
		text := scrape(t, "http://"+c.Pod.Address+"/metrics/cadvisor")
		w := podSum(text, "container_fs_writes_bytes_total", "lab-lab-broker-0")
		r := podSum(text, "container_fs_reads_bytes_total", "lab-lab-broker-0")
		if w >= 8<<20 && r >= 16<<20 {
			t.Logf("the pod's disk counters: %g bytes written, %g read", w, r)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("container_fs_writes_bytes_total %g, container_fs_reads_bytes_total %g 20 s into the pod's direct I/O, want at least 8 and 16 MiB", w, r)
		}
		time.Sleep(time.Second)
	}
}

// scrape is the metrics text at url.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// podSum is the sum of metric's samples for pod (over devices or interfaces).
func podSum(text, metric, pod string) float64 {
	var sum float64
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, metric+"{") || !strings.Contains(line, `pod="`+pod+`"`) {
			continue
		}
		fields := strings.Fields(line[strings.LastIndex(line, "}")+1:])
		if len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// sample is the value of series in a metrics text (cAdvisor adds each sample's timestamp).
func sample(t *testing.T, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no %s in the metrics:\n%s", series, text)
	return 0
}
