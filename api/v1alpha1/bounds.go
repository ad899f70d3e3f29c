package v1alpha1

// Bounds that admission and the planner share. The kubebuilder markers cannot refer to Go
// constants, so the markers repeat these strings; bounds_test.go holds every generated CRD
// field and rule to them.

// Quantities and the API server's CEL rules. A Quantity keeps its decimal exponent as written,
// so "1e99999999" and "1e-99999999" are valid Quantities of ten characters; the CEL quantity
// library expands them to their full digits — parsing a negative exponent rounds the value to
// nano precision (a division by 10^99999999), comparing a positive one rescales it — and on the
// CRDs before issue 15 one such write cost the API server 95 s of CPU and 378 MB. An OpenAPI
// pattern cannot stop it: a pattern failure does not keep the API server from running the CEL
// rules (only Required, TooLong, TooMany, NotSupported and type errors do:
// apiextensions-apiserver pkg/registry/customresource/strategy.go, hasBlockingErr), and
// controller-gen puts no maxLength or pattern of ours on an int-or-string field. So every rule
// that reads a quantity (bounds_test.go checks each):
//   - first refuses a negative exponent with contains('e-')/contains('E-') — cheap, unlike
//     matches(), whose estimated cost on an int-or-string (sized at the whole request) would
//     exceed the API server's CEL budget;
//   - then bounds the value by asApproximateFloat(), which never expands the digits (a huge
//     exponent is +Inf), before any exact comparison.
// The planner (internal/plan/units.go, checkMagnitude) refuses the same quantities for input
// that never met an API server, and the CLI's offline admission (internal/schema) refuses
// exponents of four digits or more before the rules run.

// Caps on quantities, documented in docs/admission.md.
const (
	// MaxLinkBitsPerSecond is the fastest link a node may declare: 1.6 Tbit/s, the fastest
	// Ethernet rate standardised (IEEE 802.3dj).
	MaxLinkBitsPerSecond = "1600G"
	// MinVolumeSize is the smallest Kafka log, Elasticsearch data, spill or shuffle data volume:
	// below 1Gi a broker's log segments (1 GiB by default, Kafka's log.segment.bytes) do not fit.
	MinVolumeSize = "1Gi"
	// MaxVolumeSize is the largest volume and local disk size accepted.
	MaxVolumeSize = "1Pi"
	// MaxTierBytesPerSecond caps a tier's declared bandwidth: 1 TB/s, far above any one volume.
	MaxTierBytesPerSecond = "1T"
	// MaxAutoPartitions caps the partition count Strata chooses by itself: Kafka's own guidance
	// is a few thousand partitions per broker, and every partition costs open files and
	// controller work. Automatic partitions are executors × cores rounded up to a multiple of
	// the brokers, so admission holds executors.max × cores to the cap and the planner rounds up
	// only within it (internal/plan, partitionsAndBrokers). Set spec.kafka.topic.partitions (up
	// to 100,000) to go beyond.
	MaxAutoPartitions = 10000
)

// A pipeline's name is the stem of its children's names, and three of the operators that
// receive them are stricter than the API server is with a custom resource's name (a DNS
// subdomain, so dots and a leading digit pass):
//   - the Spark operator's webhook refuses a SparkApplication whose name is not a DNS-1035 label
//     (kubeflow/spark-operator v2.5.2, internal/webhook/sparkapplication_validator.go,
//     validateName: "This prevents failures later when creating related resources like
//     Services");
//   - Strimzi and ECK name Services after the Kafka and the Elasticsearch (<name>-kafka-bootstrap,
//     <name>-es-http), and a Service's name must be a DNS-1035 label (k8s.io/kubernetes v1.36.3,
//     pkg/apis/core/validation/validation.go: ValidateServiceName is NameIsDNS1035Label);
//   - Strimzi names a broker pod <kafka>-<pool>-<id> and its hostname must fit 63 characters:
//     with the Kafka and the pool named after the pipeline, MaxNameLength.
const (
	// NamePattern is a DNS-1035 label: lowercase letters, digits and '-', starting with a letter
	// and ending with a letter or a digit.
	NamePattern = `^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// MaxNameLength is the longest pipeline name.
	MaxNameLength = 23
)

// KafkaVersions are the Kafka versions Strimzi 1.2.0 supports: the entries with
// `supported: true` in strimzi/strimzi-kafka-operator, tag 1.2.0, kafka-versions.yaml. The
// enum on spec.kafka.version repeats them (bounds_test.go checks).
var KafkaVersions = []string{"4.2.0", "4.2.1", "4.3.0", "4.3.1"}

// DefaultKafkaVersion is spec.kafka.version's default.
const DefaultKafkaVersion = "4.2.0"

// ImagePattern is github.com/distribution/reference's ReferenceRegexp (v0.6.0), the grammar
// docker and containerd parse image references with; bounds_test.go checks that the two agree.
// The planner also parses the image with that library, which checks the lengths a regular
// expression cannot.
const ImagePattern = `^((?:(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*)(?::([\w][\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}))?$`

// LabelKeyPattern is a Kubernetes qualified name (a label key): an optional DNS-subdomain prefix
// and a slash, then a name of at most 63 characters (k8s.io/apimachinery
// pkg/util/validation.IsQualifiedName).
const LabelKeyPattern = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`

// RackKeyPattern is spec.kafka.rackTopologyKey's: a label key, or empty (rack awareness off).
const RackKeyPattern = `^$|` + LabelKeyPattern
