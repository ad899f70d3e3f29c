package plan

import (
	"slices"
	"strings"

	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Bounds the API server's rules enforce (api/v1alpha1/bounds.go), checked again for input that
// never met an API server, so that the planner and the builders never see what admission
// refuses: a 1e30 link, half-byte volumes, 8Ei volumes clamped into MaxInt64, two and a half
// million automatic partitions, a Kafka version Strimzi does not run, an image no runtime can
// pull. They run after validate's range checks, which bound every quantity's magnitude first.

var (
	maxLink         = resource.MustParse(v1alpha1.MaxLinkBitsPerSecond)
	minVolume       = resource.MustParse(v1alpha1.MinVolumeSize)
	maxVolume       = resource.MustParse(v1alpha1.MaxVolumeSize)
	maxTierRate     = resource.MustParse(v1alpha1.MaxTierBytesPerSecond)
	maxLocalPerPath = resource.MustParse(v1alpha1.MaxVolumeSize)
)

func checkAtMost(field string, q, max resource.Quantity) error {
	if q.Cmp(max) > 0 {
		return fieldErr(field, "must be at most %s, got %s", max.String(), q.String())
	}
	return nil
}

func checkVolume(field string, q resource.Quantity) error {
	if q.Cmp(minVolume) < 0 || q.Cmp(maxVolume) > 0 {
		return fieldErr(field, "must be at least %s (one Kafka log segment is 1 GiB) and at most %s, got %s", minVolume.String(), maxVolume.String(), q.String())
	}
	return nil
}

// checkName refuses a pipeline name the upstream operators would refuse in its children's
// names (api/v1alpha1/bounds.go, NamePattern): a DNS-1035 label of at most MaxNameLength
// characters. An empty name passes: a pipeline built in Go for planning alone need not have
// one, and the API server requires it of every stored one.
func checkName(name string) error {
	if name == "" {
		return nil
	}
	if len(name) > v1alpha1.MaxNameLength {
		return fieldErr("metadata.name", "must be at most %d characters: Strimzi names broker pods <name>-<name>-broker-<id>, which must fit a 63-character hostname; got %q (%d)",
			v1alpha1.MaxNameLength, name, len(name))
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return fieldErr("metadata.name", "%q must be a DNS-1035 label (lowercase letters, digits and '-', starting with a letter): the Spark operator refuses a SparkApplication named otherwise, and Strimzi and ECK name Services after the pipeline", name)
	}
	return nil
}

// validateBounds checks a defaulted spec against the caps of api/v1alpha1/bounds.go.
func validateBounds(s *v1alpha1.AnalyticsPipelineSpec) error {
	k, sp := s.Kafka, s.Spark
	checks := []func() error{
		func() error {
			return checkAtMost("spec.network.linkBitsPerSecond", s.Network.LinkBitsPerSecond, maxLink)
		},
		func() error {
			if k.Version != "" && !slices.Contains(v1alpha1.KafkaVersions, k.Version) {
				return fieldErr("spec.kafka.version", "%q is not a Kafka version Strimzi 1.2.0 runs (%s)", k.Version, strings.Join(v1alpha1.KafkaVersions, ", "))
			}
			return nil
		},
		func() error { return checkVolume("spec.kafka.storage.size", k.Storage.Size) },
		func() error {
			if k.RackTopologyKey == "" {
				return nil
			}
			if errs := validation.IsQualifiedName(k.RackTopologyKey); len(errs) > 0 {
				return fieldErr("spec.kafka.rackTopologyKey", "%q is not a label key: %s", k.RackTopologyKey, strings.Join(errs, "; "))
			}
			return nil
		},
		func() error {
			// Automatic partitions are the planned executors × cores rounded up to a multiple of
			// the brokers, but only within the cap (partitionsAndBrokers): the cores at the most
			// executors are all admission can bound, without knowing the brokers, and all it needs
			// to, so that an admitted spec never gets more than the cap.
			auto := int64(sp.Executors.Max) * int64(sp.Executors.Cores)
			if k.Topic.Partitions == 0 && auto > v1alpha1.MaxAutoPartitions {
				return fieldErr("spec.kafka.topic.partitions", "automatic partitions (spec.spark.executors.max × spec.spark.executors.cores = %d, rounded up to a multiple of the brokers only within the cap) would exceed %d, the most Strata chooses by itself; set spec.kafka.topic.partitions (up to 100000) or lower spec.spark.executors.max", auto, v1alpha1.MaxAutoPartitions)
			}
			return nil
		},
		func() error {
			if sp.Image == "" { // absent: Strata's ingestion job image
				return nil
			}
			if _, err := reference.ParseNormalizedNamed(sp.Image); err != nil {
				return fieldErr("spec.spark.image", "%q is not an image reference: %v", sp.Image, err)
			}
			return nil
		},
		func() error {
			if sp.MainClass != "" && sp.MainApplicationFile == "" {
				return fieldErr("spec.spark.mainClass", "%q names a class but mainApplicationFile is absent: set the jar holding it, or neither for Strata's ingestion job", sp.MainClass)
			}
			return nil
		},
		func() error { return checkVolume("spec.spark.shuffle.spillSize", sp.Shuffle.SpillSize) },
		func() error { return checkVolume("spec.spark.shuffle.dataSize", *sp.Shuffle.DataSize) },
		func() error { return checkVolume("spec.elasticsearch.storage.size", s.Elasticsearch.Storage.Size) },
		func() error { return checkCompute("spec.kafka.resources", k.Resources) },
		func() error {
			if c := k.Controllers; c != nil {
				return checkCompute("spec.kafka.controllers.resources", c.Resources)
			}
			return nil
		},
		func() error { return checkCompute("spec.elasticsearch.resources", s.Elasticsearch.Resources) },
		func() error {
			if m := s.Elasticsearch.Masters; m != nil {
				return checkCompute("spec.elasticsearch.masters.resources", m.Resources)
			}
			return nil
		},
	}
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// validateTierBounds checks a tier's bandwidths and local capacity against their caps.
func validateTierBounds(t *v1alpha1.StorageTier) error {
	for _, f := range []struct {
		field string
		q     resource.Quantity
	}{{"spec.readBytesPerSecond", t.Spec.ReadBytesPerSecond}, {"spec.writeBytesPerSecond", t.Spec.WriteBytesPerSecond}} {
		if f.q.Cmp(maxTierRate) > 0 {
			return tierErr(t.Name, f.field, "must be at most %s, got %s", maxTierRate.String(), f.q.String())
		}
	}
	if l := t.Spec.Local; l != nil {
		if err := checkMagnitude("spec.local.capacityPerPath", l.CapacityPerPath); err != nil {
			return tierErr(t.Name, err.Field, "%s", err.Detail)
		}
		if l.CapacityPerPath.Cmp(maxLocalPerPath) > 0 {
			return tierErr(t.Name, "spec.local.capacityPerPath", "must be at most %s, got %s", maxLocalPerPath.String(), l.CapacityPerPath.String())
		}
	}
	return nil
}

var (
	minCPU, maxCPU       = resource.MustParse("100m"), resource.MustParse("256")
	minMemory, maxMemory = resource.MustParse("1Gi"), resource.MustParse("1Ti")
)

// checkCompute checks a resources override against the API's bounds (ComputeResources).
func checkCompute(field string, r *v1alpha1.ComputeResources) error {
	if r == nil {
		return nil
	}
	if c := r.CPU; c != nil && (c.Cmp(minCPU) < 0 || c.Cmp(maxCPU) > 0) {
		return fieldErr(field+".cpu", "must be between %s and %s, got %s", minCPU.String(), maxCPU.String(), c.String())
	}
	if m := r.Memory; m != nil && (m.Cmp(minMemory) < 0 || m.Cmp(maxMemory) > 0) {
		return fieldErr(field+".memory", "must be between %s and %s, got %s", minMemory.String(), maxMemory.String(), m.String())
	}
	return nil
}
