package controlplane

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"testing"

	"github.com/strata-dev/strata/internal/localport"
)

// The control plane's processes listen on ports chosen below the ephemeral range (choosePorts),
// the peer port too, and are reached on them.
func TestControlPlanePortsBelowTheEphemeralRange(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a control plane")
	}
	if !localport.Chosen(10000) {
		t.Skip("the kernel's ephemeral range leaves too few ports below it: envtest picks, as localport does")
	}
	env, err := Start(context.Background(), WithoutUpstreamCRDs(), WithoutStrataCRDs())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	if env.Existing {
		t.Skip("an existing cluster: its ports are not ours")
	}
	apiserver, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	etcd := env.env.ControlPlane.Etcd
	peers := etcd.Configure().Get("listen-peer-urls").Get(nil)
	if len(peers) != 1 {
		t.Fatalf("etcd's listen-peer-urls = %v, want the one choosePorts set", peers)
	}
	peer, err := url.Parse(peers[0])
	if err != nil {
		t.Fatal(err)
	}
	for name, hostPort := range map[string]string{"kube-apiserver": apiserver.Host, "etcd": etcd.URL.Host, "etcd's peers": peer.Host} {
		_, p, err := net.SplitHostPort(hostPort)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(p)
		if !localport.Chosen(port) {
			t.Errorf("%s listens on %s, not below the ephemeral range", name, hostPort)
		}
		c, err := net.Dial("tcp", hostPort)
		if err != nil {
			t.Errorf("%s is not listening on %s: %v", name, hostPort, err)
			continue
		}
		_ = c.Close()
	}
}
