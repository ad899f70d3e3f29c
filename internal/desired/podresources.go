package desired

import (
	"github.com/strata-dev/strata/api/v1alpha1"
)

// podResources returns the plan's resources for a role; a plan without them (built by hand, or
// written before they were planned) gives none, and the upstream operators' defaults apply.
func podResources(plan v1alpha1.Plan, role string) (v1alpha1.PodResources, bool) {
	for _, r := range plan.Resources {
		if r.Role == role {
			return r, !r.Memory.IsZero()
		}
	}
	return v1alpha1.PodResources{}, false
}

// containerResources is a container's resources: memory requested and limited alike (the heap
// and page cache are planned inside the limit, and a pod using no more than its request is not
// the first evicted), CPU requested, and also limited when limitCPU.
func containerResources(r v1alpha1.PodResources, limitCPU bool) object {
	requests := object{"cpu": r.CPU.String(), "memory": r.Memory.String()}
	limits := object{"memory": r.Memory.String()}
	if limitCPU {
		limits["cpu"] = r.CPU.String()
	}
	return object{"requests": requests, "limits": limits}
}

// heapOptions is -Xms = -Xmx = the planned heap, in the JVM's units.
func heapOptions(r v1alpha1.PodResources) (xms, xmx string) {
	h := SparkSize(r.Heap.Value())
	return h, h
}
