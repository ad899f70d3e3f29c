package upstream

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// SparkOperatorNamespace is the Spark operator's namespace (its chart's spark-operator).
const SparkOperatorNamespace = "spark-operator"

// sparkWebhookName is the chart's name for both webhook configurations, which the webhook keeps
// the caBundle of (spark-operator v2.5.2, internal/controller/mutatingwebhookconfiguration).
const sparkWebhookName = "spark-operator-webhook"

// startSparkOperator runs the Spark operator's controller and webhook (one binary, v2.5.2) for
// jobNamespaces, as its chart does. The controller submits with the real spark-submit from a
// SPARK_HOME of Maven Central's Spark jars, which creates the driver pod, its ConfigMaps and
// Service; the pod webhook then applies the SparkApplication's pod settings (volumes, secrets,
// security context) to it. The webhook makes its own certificate (for localhost among its names,
// pkg/certificate Generate) and writes the caBundle into the configurations created here.
func startSparkOperator(ctx context.Context, t testing.TB, dir string, cfg *rest.Config, apiServer *url.URL,
	c client.Client, jobNamespaces ...string) (controller, webhook *proc.Process) {
	t.Helper()
	bin := tool(t, "spark-operator")
	installCRDs(ctx, t, cfg, bin)
	home := sparkHome(t, dir)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SparkOperatorNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	port := testutil.FreePortNumber(t)
	ns := jobNamespaceSelector(jobNamespaces)
	hook := func(name, path string, rule admissionv1.RuleWithOperations) admissionv1.MutatingWebhook {
		return admissionv1.MutatingWebhook{Name: name, AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionv1.WebhookClientConfig{URL: ptr.To("https://localhost:" + port + path)},
			SideEffects:  ptr.To(admissionv1.SideEffectClassNone), NamespaceSelector: ns,
			Rules: []admissionv1.RuleWithOperations{rule}}
	}
	rule := func(group, version, resource string, ops ...admissionv1.OperationType) admissionv1.RuleWithOperations {
		return admissionv1.RuleWithOperations{Operations: ops, Rule: admissionv1.Rule{
			APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}}}
	}
	apps := rule("sparkoperator.k8s.io", "v1beta2", "sparkapplications", admissionv1.Create, admissionv1.Update)
	// The chart's configurations (charts/spark-operator-chart/templates/webhook/*webhookconfiguration.yaml).
	pods := hook("mutate--v1-pod.sparkoperator.k8s.io", "/mutate--v1-pod", rule("", "v1", "pods", admissionv1.Create))
	pods.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"sparkoperator.k8s.io/launched-by-spark-operator": "true"}}
	mutating := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: sparkWebhookName},
		Webhooks: []admissionv1.MutatingWebhook{pods,
			hook("mutate-sparkoperator-k8s-io-v1beta2-sparkapplication.sparkoperator.k8s.io", "/mutate-sparkoperator-k8s-io-v1beta2-sparkapplication", apps)}}
	v := hook("validate-sparkoperator-k8s-io-v1beta2-sparkapplication.sparkoperator.k8s.io", "/validate-sparkoperator-k8s-io-v1beta2-sparkapplication", apps)
	validating := &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: sparkWebhookName},
		Webhooks: []admissionv1.ValidatingWebhook{{Name: v.Name, AdmissionReviewVersions: v.AdmissionReviewVersions,
			ClientConfig: v.ClientConfig, SideEffects: v.SideEffects, NamespaceSelector: v.NamespaceSelector, Rules: v.Rules}}}
	createWebhooks(ctx, t, c, mutating, validating)

	// The operator runs as a ServiceAccount of its own, with a token: the Kubernetes client
	// spark-submit uses (fabric8 7.1) cannot read the client key of envtest's admin kubeconfig
	// ("Invalid DER: object is not integer"), and in a cluster it authenticates with the pod's
	// token. Bound to cluster-admin here: its chart's RBAC is not what is under test.
	kubeconfig := serviceAccountKubeconfig(ctx, t, dir, cfg, c, SparkOperatorNamespace, "spark-operator")
	namespaces := flag("namespaces", strings.Join(jobNamespaces, ","))
	env := []string{"KUBECONFIG=" + kubeconfig, "SPARK_HOME=" + home,
		// What a pod gets for the API server's Service; the controller builds spark-submit's
		// --master from them (pkg/util GetMasterURL).
		"KUBERNETES_SERVICE_HOST=" + apiServer.Hostname(), "KUBERNETES_SERVICE_PORT=" + apiServer.Port()}
	webhook = run(t, dir, "spark-operator-webhook", env, bin, "webhook", "start", namespaces,
		flag("webhook-port", port),
		flag("webhook-cert-dir", certDir(dir, "spark-operator")),
		flag("webhook-secret-name", "spark-operator-webhook-certs"),
		flag("webhook-secret-namespace", SparkOperatorNamespace),
		flag("webhook-svc-name", "spark-operator-webhook-svc"),
		flag("webhook-svc-namespace", SparkOperatorNamespace),
		flag("mutating-webhook-name", sparkWebhookName),
		flag("validating-webhook-name", sparkWebhookName),
		flag("health-probe-bind-address", testutil.FreePort(t)),
		flag("leader-election", "false"))
	waitTLS(t, webhook, "localhost:"+port)
	controller = run(t, dir, "spark-operator-controller", env, bin, "controller", "start", namespaces,
		flag("health-probe-bind-address", testutil.FreePort(t)),
		flag("enable-ui-service", "false"),
		flag("leader-election", "false"))
	return controller, webhook
}

// jobNamespaceSelector selects the job namespaces, as the chart's spark.jobNamespaces does.
func jobNamespaceSelector(namespaces []string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: namespaces}}}
}

// sparkHome is a SPARK_HOME the controller can run spark-submit from: jvm/spark-home's jars
// (built with Maven when missing), bin/spark-submit as the distribution's (which asks Spark's
// launcher for the java command, as bin/spark-class does), and the RELEASE file by which the
// launcher knows a distribution.
func sparkHome(t testing.TB, dir string) string {
	t.Helper()
	root := testutil.Root()
	jars := filepath.Join(root, "jvm", "spark-home", "target", "spark-home", "jars")
	mvn := os.Getenv("MVN")
	if mvn == "" {
		mvn = "mvn"
	}
	// Seconds once Maven has the jars; run every time so that the jars follow the pom.
	cmd := exec.Command(mvn, "-B", "-ntp", "-q", "-f", filepath.Join(root, "jvm", "pom.xml"), "-pl", "spark-home", "package")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("SPARK_HOME's jars (mvn -f jvm/pom.xml -pl spark-home package): %v\n%s", err, out)
	}
	home := filepath.Join(dir, "spark-home")
	if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(jars, filepath.Join(home, "jars")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "RELEASE"), []byte("Spark 4.0.2 (from Maven Central)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "bin", "spark-submit"), []byte(sparkSubmit), 0o755); err != nil {
		t.Fatal(err)
	}
	return home
}

// sparkSubmit is bin/spark-submit and bin/spark-class of Spark's distribution in one: the
// launcher prints the java command NUL-separated, ended by its own exit code.
const sparkSubmit = `#!/usr/bin/env bash
# Spark 4.0.2's bin/spark-class, for SparkSubmit: the launcher prints messages for the user, a NUL
# line, then the java command's arguments each ended by a NUL, and last its own exit code.
export SPARK_SCALA_VERSION=2.13
RUNNER="${JAVA_HOME:+$JAVA_HOME/bin/}java"
build_command() {
  "$RUNNER" -Xmx128m -cp "$SPARK_HOME/jars/*" org.apache.spark.launcher.Main org.apache.spark.deploy.SparkSubmit "$@"
  printf "%d\0" $?
}
set +o posix
CMD=()
DELIM=$'\n'
CMD_START_FLAG="false"
while IFS= read -d "$DELIM" -r _ARG; do
  ARG=${_ARG//$'\r'}
  if [ "$CMD_START_FLAG" == "true" ]; then
    CMD+=("$ARG")
  elif [ "$ARG" == $'\0' ]; then
    DELIM=''
    CMD_START_FLAG="true"
  elif [ "$ARG" != "" ]; then
    echo "$ARG"
  fi
done < <(build_command "$@")
COUNT=${#CMD[@]}
LAST=$((COUNT - 1))
LAUNCHER_EXIT_CODE=${CMD[$LAST]}
if ! [[ $LAUNCHER_EXIT_CODE =~ ^[0-9]+$ ]]; then echo "${CMD[@]}" | head -n-1 1>&2; exit 1; fi
if [ "$LAUNCHER_EXIT_CODE" != 0 ]; then exit "$LAUNCHER_EXIT_CODE"; fi
exec "${CMD[@]:0:$LAST}"
`
