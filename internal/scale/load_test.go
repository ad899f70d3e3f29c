package scale

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unrelated is the part of a large cluster that is none of the operator's business: Secrets,
// ConfigMaps and Pods (each many), spread over namespaces of a thousand, and Nodes. Their sizes
// are those of ordinary objects (a kilobyte of data, a pod with one container, a node with a
// cloud provider's labels), so that a cache that holds them shows in the resident set.
type unrelated struct {
	perKind, nodes int
}

// create makes them with workers clients in parallel: the load generator is not what is measured.
func (u unrelated) create(t testing.TB, c client.Client, workers int) {
	t.Helper()
	ctx := context.Background()
	namespaces := (u.perKind + 999) / 1000
	for i := 0; i < namespaces; i++ {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%d", i)}}
		if err := c.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	objs := make(chan client.Object, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for obj := range objs {
				if err := c.Create(ctx, obj); err != nil {
					select {
					case errs <- fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err):
					default:
					}
				}
			}
		}()
	}
	data := strings.Repeat("x", 1024)
	for i := 0; i < u.perKind; i++ {
		ns := fmt.Sprintf("unrelated-%d", i/1000)
		meta := func(prefix string) metav1.ObjectMeta {
			return metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%05d", prefix, i),
				Labels: map[string]string{"app.kubernetes.io/name": "unrelated", "app.kubernetes.io/instance": fmt.Sprintf("i%d", i%50)}}
		}
		objs <- &corev1.Secret{ObjectMeta: meta("secret"), StringData: map[string]string{"password": data}}
		objs <- &corev1.ConfigMap{ObjectMeta: meta("config"), Data: map[string]string{"config.yaml": data}}
		objs <- unrelatedPod(meta("pod"))
	}
	for i := 0; i < u.nodes; i++ {
		objs <- unrelatedNode(i)
	}
	close(objs)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

func unrelatedPod(meta metav1.ObjectMeta) *corev1.Pod {
	env := []corev1.EnvVar{}
	for _, k := range []string{"LOG_LEVEL", "HTTP_PORT", "DB_HOST", "DB_NAME", "CACHE_TTL"} {
		env = append(env, corev1.EnvVar{Name: k, Value: strings.ToLower(k) + "-value"})
	}
	return &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		Containers: []corev1.Container{{
			Name: "app", Image: "registry.example/unrelated/app:1.2.3", Env: env,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
		}},
	}}
}

func unrelatedNode(i int) *corev1.Node {
	name := fmt.Sprintf("unrelated-node-%05d", i)
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"),
		corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"node.kubernetes.io/instance-type": "m5.4xlarge", "topology.kubernetes.io/region": "eu-west-1",
			"topology.kubernetes.io/zone": fmt.Sprintf("eu-west-1%c", 'a'+i%3),
		}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///eu-west-1a/i-" + name},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.%d.%d", i/65536, i/256%256, i%256)},
				{Type: corev1.NodeHostName, Address: name}},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.34.0", ContainerRuntimeVersion: "containerd://2.1.0",
				OSImage: "Amazon Linux 2023", KernelVersion: "6.1.0", OperatingSystem: "linux", Architecture: "amd64"}},
	}
}
