package netlab_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/lab/netlab"
)

// transfer sends from one host to another for d and returns the bytes per second the receiver
// got.
func transfer(t *testing.T, from, to *netlab.Host, d time.Duration) float64 {
	t.Helper()
	var l net.Listener
	if err := to.Do(func() (err error) {
		l, err = net.Listen("tcp", to.IP+":0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		got <- n
	}()
	var c net.Conn
	if err := from.Do(func() (err error) {
		c, err = net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	start := time.Now()
	_ = c.SetWriteDeadline(start.Add(d))
	for {
		if _, err := c.Write(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break
			}
			t.Fatal(err)
		}
	}
	_ = c.Close()
	n := <-got
	return float64(n) / time.Since(start).Seconds()
}

// Each direction of a host's link carries at most its rate, and about that much when pushed.
func TestShapedLinks(t *testing.T) {
	const rate = 4 << 20
	lab := netlab.New(t,
		netlab.HostSpec{Name: "sender", Link: netlab.Link{SendBytesPerSecond: rate}},
		netlab.HostSpec{Name: "receiver", Link: netlab.Link{ReceiveBytesPerSecond: rate / 2}},
		netlab.HostSpec{Name: "free"})
	sender, receiver, free := lab.Hosts["sender"], lab.Hosts["receiver"], lab.Hosts["free"]
	before, err := sender.Counters()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		from, to *netlab.Host
		cap      float64
	}{
		{"send-limited", sender, free, rate},
		{"receive-limited", free, receiver, rate / 2},
	} {
		got := transfer(t, c.from, c.to, 2*time.Second)
		t.Logf("%s: %.2f MiB/s through a cap of %.2f MiB/s", c.name, got/(1<<20), c.cap/(1<<20))
		// Above the cap only by the bucket's burst; below it by TCP's ramp-up and a busy machine.
		if got > c.cap*1.1 || got < c.cap*0.5 {
			t.Errorf("%s: %.0f B/s through a cap of %.0f B/s", c.name, got, c.cap)
		}
	}
	after, err := sender.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if sent := after.Sent - before.Sent; sent < rate { // two seconds at about the rate
		t.Errorf("the sender's counter grew by %d bytes, want about %d", sent, 2*rate)
	}
	if out, err := free.Command("ip", "-br", "addr", "show", "dev", "eth0").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), free.IP) {
		t.Errorf("a command inside the namespace sees %q (%v), want its address %s", out, err, free.IP)
	}

	// The hub reaches every host: a server in one, asked through the hub's client.
	var l net.Listener
	if err := free.Do(func() (err error) { l, err = net.Listen("tcp", free.IP+":0"); return err }); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }),
		ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	resp, err := lab.Hub.HTTPClient().Get("http://" + l.Addr().String())
	if err != nil {
		t.Fatalf("the hub cannot reach %s: %v", free.Name, err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(body) != "hello" {
		t.Errorf("through the hub: %q", body)
	}
	// The root namespace does not: the lab's addresses exist only inside it.
	if _, err := (&http.Client{Timeout: time.Second}).Get("http://" + l.Addr().String()); err == nil {
		t.Errorf("%s is reachable from outside the lab", l.Addr())
	}
}
