package lab

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sparkHome lays out what the job's image has under $SPARK_HOME (/opt/spark in the apache/spark
// images): a jars directory holding the distribution's jars, and the RELEASE file by which
// Spark's launcher knows a distribution from a source build (AbstractCommandBuilder.findJarsDir:
// $SPARK_HOME/jars when RELEASE exists). The jars are links to the Maven artifacts jobJars
// lists, the same Spark 4.0.2 the image carries. Spark's standalone
// worker, which local-cluster mode runs inside the driver, builds each executor's command from
// this layout as the image's executors get theirs from the image.
func sparkHome(t testing.TB, dir string, sparkJars []string) string {
	t.Helper()
	home := filepath.Join(dir, "spark-home")
	jars := filepath.Join(home, "jars")
	if err := os.MkdirAll(jars, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, jar := range sparkJars {
		if err := os.Symlink(jar, filepath.Join(jars, filepath.Base(jar))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "RELEASE"), []byte("Spark 4.0.2 (the lab's, from Maven Central)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// sparkEnv is the environment spark-submit runs the driver in, and the driver's worker its
// executors: SPARK_HOME; SPARK_SCALA_VERSION, which the distribution's bin/load-spark-env.sh
// exports (2.13 in Spark 4) and without which the launcher looks for build directories; and
// SPARK_LOCAL_IP, so that the driver, its worker and its executors talk over loopback only
// (they would use the machine's address otherwise).
func sparkEnv(home string) []string {
	return append(os.Environ(), "SPARK_HOME="+home, "SPARK_SCALA_VERSION=2.13", "SPARK_LOCAL_IP=127.0.0.1")
}

// sparkSubmitCommand is the command the image's bin/spark-submit runs for args: like
// bin/spark-class, it asks Spark's launcher (org.apache.spark.launcher.Main) for the java command
// line, which carries what the distribution adds itself (the driver's -Xmx from
// spark.driver.memory, the module options Spark needs on Java 17), and runs it.
func sparkSubmitCommand(t testing.TB, home string, args []string) *exec.Cmd {
	t.Helper()
	cp := filepath.Join(home, "jars", "*")
	launcher := exec.Command(java(), append([]string{"-Xmx128m", "-cp", cp, "org.apache.spark.launcher.Main",
		"org.apache.spark.deploy.SparkSubmit"}, args...)...)
	launcher.Env = sparkEnv(home)
	var stderr bytes.Buffer
	launcher.Stderr = &stderr
	out, err := launcher.Output()
	if err != nil {
		t.Fatalf("Spark's launcher: %v\n%s", err, stderr.String())
	}
	argv, env, err := launchCommand(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(sparkEnv(home), env...)
	return cmd
}

// launchCommand parses what org.apache.spark.launcher.Main prints for bin/spark-class: messages
// for the user (usage, errors), a NUL and a newline, then the command's arguments, each ended by
// a NUL, led by `env` and NAME=value pairs when the command needs environment of its own
// (Main.prepareBashCommand; bin/spark-class reads up to the NUL line, then the arguments).
func launchCommand(out []byte) (argv, env []string, err error) {
	text := string(out)
	if i := strings.Index(text, "\x00\n"); i >= 0 {
		text = text[i+2:]
	}
	parts := strings.Split(strings.TrimSuffix(text, "\x00"), "\x00")
	if len(parts) > 0 && parts[0] == "env" {
		parts = parts[1:]
		for len(parts) > 0 && strings.Contains(parts[0], "=") && !strings.HasPrefix(parts[0], "-") {
			env = append(env, parts[0])
			parts = parts[1:]
		}
	}
	if len(parts) == 0 || parts[0] == "" {
		return nil, nil, fmt.Errorf("Spark's launcher printed no command: %q", out)
	}
	return parts, env, nil
}

// podConf is what the Spark operator passes to spark-submit from the SparkApplication's typed
// driver and executor fields, after the sparkConf entries and in its order (kubeflow/spark-operator
// v2.5.2, internal/controller/sparkapplication/submission.go: driverConfOption then
// executorConfOption; cores, memory, memoryOverhead, instances, javaOptions). Later --conf
// entries win, so these override the same keys in sparkConf.
func podConf(app *unstructured.Unstructured) [][2]string {
	var out [][2]string
	for _, role := range []string{"driver", "executor"} {
		spec, _, _ := unstructured.NestedMap(app.Object, "spec", role)
		if role == "executor" {
			if n, ok := spec["instances"].(int64); ok {
				out = append(out, [2]string{"spark.executor.instances", strconv.FormatInt(n, 10)})
			}
		}
		if n, ok := spec["cores"].(int64); ok {
			out = append(out, [2]string{"spark." + role + ".cores", strconv.FormatInt(n, 10)})
		}
		for _, f := range []string{"memory", "memoryOverhead"} {
			if s, ok := spec[f].(string); ok {
				out = append(out, [2]string{"spark." + role + "." + f, s})
			}
		}
		if s, ok := spec["javaOptions"].(string); ok {
			out = append(out, [2]string{"spark." + role + ".extraJavaOptions", s})
		}
	}
	return out
}

// mebibytes reads a Spark memory size as desired.SparkSize writes it (whole g or m).
func mebibytes(size string) (int64, error) {
	unit := int64(1)
	switch {
	case strings.HasSuffix(size, "g"):
		unit = 1024
	case strings.HasSuffix(size, "m"):
	default:
		return 0, fmt.Errorf("Spark size %q: want <n>g or <n>m", size)
	}
	n, err := strconv.ParseInt(size[:len(size)-1], 10, 64)
	return n * unit, err
}
