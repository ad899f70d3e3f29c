package lab

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strata-dev/strata/internal/testutil"
)

var jvmOnce struct {
	sync.Once
	err error
	out []byte
}

// buildJVM runs the project's Maven build once per test binary for what the lab runs: the
// launcher (jvm/lab: Kafka, the JMX exporter, the search node; versions pinned in
// jvm/lab/pom.xml, and the job tests' ElasticsearchCompat, hence -am), the ingestion job and the
// shuffle plugin. $MVN names the Maven command (default mvn, as the Makefile's).
func buildJVM(t testing.TB) string {
	t.Helper()
	jvm := filepath.Join(testutil.Root(), "jvm")
	jvmOnce.Do(func() {
		mvn := os.Getenv("MVN")
		if mvn == "" {
			mvn = "mvn"
		}
		cmd := exec.Command(mvn, "-B", "-ntp", "-q", "-f", filepath.Join(jvm, "pom.xml"),
			"-pl", "lab,ingest-job,shuffle-plugin", "-am", "package", "-DskipTests")
		jvmOnce.out, jvmOnce.err = cmd.CombinedOutput()
	})
	if jvmOnce.err != nil {
		t.Fatalf("building the lab's JVM programs (mvn -f jvm/pom.xml -pl lab,ingest-job,shuffle-plugin -am package; Java 17 and Maven, as make jvm-test): %v\n%s", jvmOnce.err, jvmOnce.out)
	}
	return jvm
}

// classpath is the class path that runs the launcher.
func classpath(t testing.TB) string {
	target := filepath.Join(buildJVM(t), "lab", "target")
	return strings.Join([]string{filepath.Join(target, "strata-lab.jar"), filepath.Join(target, "lib", "*")}, string(os.PathListSeparator))
}

// javaCommand is the launcher in mode with args, in a JVM with a small heap (the machine runs
// several of them beside the tests).
func javaCommand(t testing.TB, heap string, mode string, args ...string) *exec.Cmd {
	t.Helper()
	// Serial GC: no GC threads competing for the machine's cores. The JIT stays at its default:
	// with C1 only, one scrape of a broker's JMX exporter takes seconds instead of about one.
	jvmArgs := []string{"-Xms64m", "-Xmx" + heap, "-XX:+UseSerialGC",
		"-cp", classpath(t), "dev.strata.lab.Lab", mode}
	return exec.Command(java(), append(jvmArgs, args...)...)
}

// java is the java command: $JAVA_HOME's when set, else the one on the PATH.
func java() string {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		return filepath.Join(home, "bin", "java")
	}
	return "java"
}
