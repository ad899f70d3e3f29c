package upstream

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Node is one KWOK node of the harness.
type Node struct {
	Name, Zone string
	// Labels are added to the node's own (hostname, zone, os, arch, KWOK's).
	Labels map[string]string
	// ControlPlane taints the node NoSchedule, as kubeadm taints a control-plane node.
	ControlPlane bool
	CPU, Memory  string
}

// NVMeLabel is the label of the nodes that have the sample tier's local disks
// (config/samples/storagetier-nvme-local.yaml).
const NVMeLabel = "strata.dev/nvme"

// ZoneLabel is the well-known zone label.
const ZoneLabel = "topology.kubernetes.io/zone"

// DefaultNodes is a cluster where placement matters: twelve workers with NVMe disks over three
// zones, two workers without them (for the pods on network storage: masters, controllers, the
// driver), and a control-plane node that has the disks' label but is tainted: hard spread that
// counts it, or counts the nodes without the disks, leaves pods Pending here.
func DefaultNodes() []Node {
	var nodes []Node
	zones := []string{"zone-a", "zone-b", "zone-c"}
	for i := 0; i < 12; i++ {
		nodes = append(nodes, Node{Name: fmt.Sprintf("nvme-%d", i), Zone: zones[i%3],
			Labels: map[string]string{NVMeLabel: "true"}, CPU: "16", Memory: "64Gi"})
	}
	for i := 0; i < 2; i++ {
		nodes = append(nodes, Node{Name: fmt.Sprintf("plain-%d", i), Zone: zones[i%3], CPU: "16", Memory: "64Gi"})
	}
	nodes = append(nodes, Node{Name: "control-plane", Zone: "zone-a", ControlPlane: true,
		Labels: map[string]string{NVMeLabel: "true", "node-role.kubernetes.io/control-plane": ""}, CPU: "16", Memory: "64Gi"})
	return nodes
}

// object is the node as a cluster would register it: KWOK's node/fast stage makes it Ready and
// keeps its lease; capacity is the node's (KWOK keeps what the node says).
func (n Node) object() *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname: n.Name, ZoneLabel: n.Zone, corev1.LabelOSStable: "linux",
		corev1.LabelArchStable: "amd64", KWOKNodeLabel: "kwok",
	}
	for k, v := range n.Labels {
		labels[k] = v
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
	}
	if n.ControlPlane {
		node.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(n.CPU), corev1.ResourceMemory: resource.MustParse(n.Memory),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("200Gi"),
	}
	node.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity}
	return node
}

// createNodes registers the nodes (their status too: the capacity the scheduler fits pods in).
func createNodes(ctx context.Context, t testing.TB, c client.Client, nodes []Node) {
	t.Helper()
	for _, n := range nodes {
		obj := n.object()
		status := obj.Status
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating node %s: %v", n.Name, err)
		}
		// KWOK and the node lifecycle controller write the status too: retry on their writes.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			obj.Status.Capacity, obj.Status.Allocatable = status.Capacity, status.Allocatable
			return c.Status().Update(ctx, obj)
		})
		if err != nil {
			t.Fatalf("node %s's capacity: %v", n.Name, err)
		}
	}
}

// AddNodes registers nodes with the cluster, as nodes joining it (or coming back to it) would.
func (c *Cluster) AddNodes(ctx context.Context, t testing.TB, nodes ...Node) {
	t.Helper()
	createNodes(ctx, t, c.Client, nodes)
}

// NodeNamed is one of the nodes the harness started with (Options.Nodes) by name, to register
// again after a test deleted it.
func (c *Cluster) NodeNamed(name string) (Node, bool) {
	for _, n := range c.nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}
