//go:build e2e

package e2e

// Records through the sample pipeline: a producer writes N JSON records to the pipeline's topic
// as a KafkaUser of its own (the listener takes SCRAM-SHA-512 and simple authorization), Strata's
// ingestion job (the image `make job-image` builds, loaded into kind) indexes them, and the
// pipeline's index then holds exactly N documents: none lost, none twice.

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/internal/desired"
)

const (
	// records is how many the producer writes.
	records = 5000
	// producerUser is the KafkaUser the suite produces as.
	producerUser = "e2e-producer"
	// strimziKafkaVersion is the Kafka Strimzi 1.2.0 runs by default (its kafka-versions.yaml);
	// the producer uses the Kafka tools of Strimzi's own image.
	strimziKafkaVersion = "4.3.1"
)

func (s *suite) moveRecords() {
	p, err := s.pipeline()
	if err != nil {
		s.t.Fatal(err)
	}
	// A KafkaUser allowed to write the topic and nothing else; the User Operator makes its
	// Secret with sasl.jaas.config (Strimzi 1.2.0, user-operator, ScramShaCredentials).
	user := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaUser",
		"metadata": map[string]any{"name": producerUser, "namespace": p.Namespace,
			"labels": map[string]any{"strimzi.io/cluster": desired.KafkaName(p)}},
		"spec": map[string]any{
			"authentication": map[string]any{"type": "scram-sha-512"},
			"authorization": map[string]any{"type": "simple", "acls": []any{
				map[string]any{"resource": map[string]any{"type": "topic", "name": desired.TopicName(p)},
					"operations": []any{"Write", "Describe"}},
			}},
		},
	}}
	s.apply([]*unstructured.Unstructured{user}, p.Namespace)
	s.eventually("the producer's KafkaUser Secret", 5*time.Minute, func() error {
		return s.c.Get(s.ctx, client.ObjectKey{Namespace: p.Namespace, Name: producerUser}, &corev1.Secret{})
	})

	produce := fmt.Sprintf(`set -eu
i=0
while [ $i -lt %d ]; do echo "{\"sensor\":\"e2e-$((i %% 7))\",\"seq\":$i}"; i=$((i+1)); done |
  bin/kafka-console-producer.sh --bootstrap-server %s --topic %s \
    --producer-property acks=all \
    --producer-property security.protocol=SASL_PLAINTEXT \
    --producer-property sasl.mechanism=SCRAM-SHA-512 \
    --producer-property "sasl.jaas.config=$JAAS"
echo produced %d`, records, desired.BootstrapServers(p), desired.TopicName(p), records)
	s.runJob(p.Namespace, "e2e-produce", "quay.io/strimzi/kafka:"+s.version("STRIMZI_VERSION")+"-kafka-"+strimziKafkaVersion,
		produce, corev1.EnvVar{Name: "JAAS", ValueFrom: secretKey(producerUser, "sasl.jaas.config")})

	// The job commits by batch; wait until the index holds every record, then check none is
	// there twice (document ids are topic-partition-offset, so a replayed batch overwrites).
	version := p.Spec.Elasticsearch.Version
	if version == "" {
		version = desired.DefaultESVersion
	}
	count := fmt.Sprintf(`set -u
for i in $(seq 1 90); do
  c=$(curl -sk -u "elastic:$ES_PASSWORD" "https://%s-es-http.%s.svc:9200/%s/_count" | sed -n 's/.*"count":\([0-9]*\).*/\1/p')
  echo "count=${c:-none}"
  [ "${c:-0}" -ge %d ] && exit 0
  sleep 10
done
exit 1`, desired.ElasticsearchName(p), p.Namespace, p.Name, records)
	log := s.runJob(p.Namespace, "e2e-count", "docker.elastic.co/elasticsearch/elasticsearch:"+version, count,
		corev1.EnvVar{Name: "ES_PASSWORD", ValueFrom: secretKey(desired.ElasticsearchName(p)+"-es-elastic-user", "elastic")})
	counts := regexp.MustCompile(`count=([0-9]+)`).FindAllStringSubmatch(log, -1)
	if len(counts) == 0 {
		s.t.Fatalf("no document count in the counting job's log:\n%s", log)
	}
	if got, _ := strconv.Atoi(counts[len(counts)-1][1]); got != records {
		s.t.Fatalf("the index holds %d documents for %d records produced", got, records)
	}
}

func secretKey(name, key string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
}

// runJob runs script in image as a Job, waits for it to succeed, and returns its pod's log.
func (s *suite) runJob(ns, name, image, script string, env ...corev1.EnvVar) string {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"e2e-job": name}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "run", Image: image, Command: []string{"sh", "-c", script}, Env: env,
					}},
				},
			},
		},
	}
	if err := s.c.Create(s.ctx, job); err != nil {
		s.t.Fatalf("Job %s: %v", name, err)
	}
	var log string
	s.eventually("Job "+name+" to succeed", 20*time.Minute, func() error {
		if err := s.c.Get(s.ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		pods := &corev1.PodList{}
		if err := s.c.List(s.ctx, pods, client.InNamespace(ns), client.MatchingLabels{"e2e-job": name}); err == nil && len(pods.Items) > 0 {
			log = s.logs(s.ctx, ns, pods.Items[0].Name, "run", false, 0)
		}
		switch {
		case job.Status.Succeeded > 0:
			return nil
		case job.Status.Failed > 0:
			s.t.Fatalf("Job %s failed; its log:\n%s", name, tail(log, 40))
		}
		return fmt.Errorf("Job %s runs; last log lines:\n%s", name, tail(log, 3))
	})
	return log
}
