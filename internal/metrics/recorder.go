package metrics

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Recorder holds the operator's pipeline metrics. Its methods are safe for concurrent use: the
// reconciler runs several reconciles at once, and the registry collects each family in a
// goroutine of its own (client_golang's Registry.Gather).
//
// The series are built when they are scraped, not held as client_golang vectors: a *GaugeVec
// keeps, per series, a metric with its label pairs as protobuf LabelPairs, its Desc and a
// hash-indexed entry (prometheus/vec.go metricMap, prometheus/gauge.go), about 600 bytes for
// each of a pipeline's ~50 series, 44 MB of the heap at 1,000 pipelines. The Recorder keeps
// what Observe computed (a family name, label values and a value per series) and each family's
// collector turns it into gauges on every Collect: the same names, labels, help and
// values, built for the scrape and dropped after it.
type Recorder struct {
	mu         sync.RWMutex
	collectors []*familyCollector
	byName     map[string]*familyCollector
	pipelines  map[pipelineKey]*recorded
	deleter    []PartialDeleter
}

// PartialDeleter is a metric vector whose series can be removed by a subset of their labels,
// as client_golang's *GaugeVec and *CounterVec are.
type PartialDeleter interface {
	DeletePartialMatch(labels prometheus.Labels) int
}

type pipelineKey struct{ namespace, name string }

// recorded is what a pipeline publishes: the samples of its last Observe and the autoscaler's
// last observed values, by family name.
type recorded struct {
	samples  []sample
	observed map[string]float64
}

// sample is one series of one family: its label values after namespace and pipeline.
type sample struct {
	family string
	labels []string
	value  float64
}

// familyCollector is the prometheus.Collector of one metric family: it describes the family
// and, on Collect, emits one gauge per pipeline series the Recorder holds for it.
type familyCollector struct {
	r    *Recorder
	d    Description
	desc *prometheus.Desc
	// names are the family's label names sorted, as client_golang sorts a metric's label pairs
	// (prometheus/value.go MakeLabelPairs; the registry copies and sorts pairs it gets
	// unsorted, registry.go checkMetricConsistency), and order[i] is names[i]'s index in
	// d.Labels.
	names []*string
	order []int
}

func newFamilyCollector(r *Recorder, d Description) *familyCollector {
	c := &familyCollector{r: r, d: d, desc: prometheus.NewDesc(d.Name, d.Help, d.Labels, nil)}
	for i := range d.Labels {
		c.order = append(c.order, i)
	}
	sort.Slice(c.order, func(a, b int) bool { return d.Labels[c.order[a]] < d.Labels[c.order[b]] })
	for _, i := range c.order {
		c.names = append(c.names, &d.Labels[i])
	}
	return c
}

// Describe sends the family's one Desc: the registry checks names and labels against it
// (and refuses a second collector with the same Desc, as it refused a second vector).
func (c *familyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect emits the family's series of every pipeline as it was last observed.
func (c *familyCollector) Collect(ch chan<- prometheus.Metric) {
	c.r.mu.RLock()
	defer c.r.mu.RUnlock()
	for key, rec := range c.r.pipelines {
		if c.d.Observed {
			if v, ok := rec.observed[c.d.Name]; ok {
				ch <- &gauge{c: c, key: key, value: v}
			}
			continue
		}
		for _, s := range rec.samples {
			if s.family == c.d.Name {
				ch <- &gauge{c: c, key: key, labels: s.labels, value: s.value}
			}
		}
	}
}

// gauge is one series as a scrape sees it (a prometheus.Metric). It is built for the scrape
// and writes its label pairs only when the registry asks (Write): a scrape of 1,000 pipelines
// makes some 50,000 of them, garbage once the scrape is encoded. client_golang's
// NewConstMetric would allocate two strings per label besides (proto.String, value.go
// MakeLabelPairs) and check every value's UTF-8 (the values are the API server's names).
// Measured (BenchmarkGather, one scrape of 1,000 pipelines): 238,600 allocations and 21 MB with
// gauge, 626,600 and 28 MB with MustNewConstMetric. Each family's Collect scans every
// pipeline's samples for its own; grouping them by family first saved no measurable time (the
// registry's sorting and encoding is the cost), so they are kept in one list.
type gauge struct {
	c      *familyCollector
	key    pipelineKey
	labels []string // after namespace and pipeline
	value  float64
}

// Desc is the family's.
func (s *gauge) Desc() *prometheus.Desc { return s.c.desc }

// Write fills m with the gauge's value and its label pairs, sorted by name.
func (s *gauge) Write(m *dto.Metric) error {
	n := len(s.c.names)
	if len(s.labels)+2 != n {
		return fmt.Errorf("%s: %d label values for %d labels", s.c.d.Name, len(s.labels)+2, n)
	}
	values := make([]string, n)
	pairs := make([]dto.LabelPair, n)
	m.Label = make([]*dto.LabelPair, n)
	for i, j := range s.c.order {
		switch j {
		case 0:
			values[i] = s.key.namespace
		case 1:
			values[i] = s.key.name
		default:
			values[i] = s.labels[j-2]
		}
		pairs[i].Name, pairs[i].Value = s.c.names[i], &values[i]
		m.Label[i] = &pairs[i]
	}
	m.Gauge = &dto.Gauge{Value: &s.value}
	return nil
}

// New returns a Recorder whose metrics are registered on reg (tests: a registry of their own).
func New(reg prometheus.Registerer) *Recorder {
	r := NewUnregistered()
	if err := r.Register(reg); err != nil {
		panic(err)
	}
	return r
}

// NewUnregistered returns a Recorder whose metrics no registry serves yet: it records, and
// Register puts it on a registry.
func NewUnregistered() *Recorder {
	r := &Recorder{byName: map[string]*familyCollector{}, pipelines: map[pipelineKey]*recorded{}}
	for _, d := range Descriptions() {
		c := newFamilyCollector(r, d)
		r.collectors = append(r.collectors, c)
		r.byName[d.Name] = c
	}
	return r
}

// Register puts the Recorder's metrics on reg. It fails when reg already has one of them
// (client_golang refuses a second registration of a name): a process registers once.
func (r *Recorder) Register(reg prometheus.Registerer) error {
	for _, c := range r.collectors {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("registering %s: %w", c.d.Name, err)
		}
	}
	return nil
}

// ForgetAlso makes Forget remove the pipeline's series from vec too.
func (r *Recorder) ForgetAlso(vec PartialDeleter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deleter = append(r.deleter, vec)
}

// Observe publishes what the pipeline's spec, status.plan and status.conditions say. A pipeline
// without a plan (its spec could not be planned) keeps its info, workload, bounds and
// conditions; its plan's series go.
func (r *Recorder) Observe(p *v1alpha1.AnalyticsPipeline) {
	r.publish(pipelineKey{p.Namespace, p.Name}, samples(p))
}

// SetObserved sets one of the autoscaler's observed metrics (BrokerLinkUtilization or
// ExecutorPageCacheRatio) on this recorder.
func (r *Recorder) SetObserved(metric, namespace, name string, value float64) error {
	c, ok := r.byName[metric]
	if !ok || !c.d.Observed {
		return fmt.Errorf("%s is not an observed metric", metric)
	}
	r.setObserved(metric, namespace, name, value)
	return nil
}

func (r *Recorder) setObserved(metric, namespace, name string, value float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.entry(pipelineKey{namespace, name})
	if rec.observed == nil {
		rec.observed = map[string]float64{}
	}
	rec.observed[metric] = value
}

// entry returns the pipeline's record, made when it has none. The caller holds r.mu.
func (r *Recorder) entry(key pipelineKey) *recorded {
	rec := r.pipelines[key]
	if rec == nil {
		rec = &recorded{}
		r.pipelines[key] = rec
	}
	return rec
}

// Forget removes every series of the pipeline.
func (r *Recorder) Forget(namespace, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pipelines, pipelineKey{namespace, name})
	match := prometheus.Labels{"namespace": namespace, "pipeline": name}
	for _, v := range r.deleter {
		v.DeletePartialMatch(match)
	}
}

// publish replaces the samples of one pipeline: a series the previous observation set and this
// one does not is gone from the next scrape. The autoscaler's observed values are left alone.
// Two samples of one series (which a vector would have set twice) keep the last value: the
// registry refuses a family that holds a series twice.
func (r *Recorder) publish(key pipelineKey, ss []sample) {
	index := make(map[string]int, len(ss))
	kept := make([]sample, 0, len(ss))
	for _, s := range ss {
		id := s.family + "\xff" + strings.Join(s.labels, "\xff")
		if i, ok := index[id]; ok {
			kept[i] = s
			continue
		}
		index[id] = len(kept)
		kept = append(kept, s)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entry(key).samples = kept
}
