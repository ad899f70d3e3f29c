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

var jarOnce struct {
	sync.Once
	classpath string
	err       error
	out       []byte
}

// classpath builds the launcher with the project's Maven build (jvm/pom.xml, module lab: Kafka
// and the JMX exporter from Maven Central, versions pinned in jvm/lab/pom.xml) once per test
// binary, and returns the class path that runs it. $MVN names the Maven command (default mvn, as
// the Makefile's).
func classpath(t testing.TB) string {
	t.Helper()
	jarOnce.Do(func() {
		mvn := os.Getenv("MVN")
		if mvn == "" {
			mvn = "mvn"
		}
		jvm := filepath.Join(testutil.Root(), "jvm")
		cmd := exec.Command(mvn, "-B", "-ntp", "-q", "-f", filepath.Join(jvm, "pom.xml"), "-pl", "lab", "package", "-DskipTests")
		jarOnce.out, jarOnce.err = cmd.CombinedOutput()
		target := filepath.Join(jvm, "lab", "target")
		jarOnce.classpath = strings.Join([]string{filepath.Join(target, "strata-lab.jar"), filepath.Join(target, "lib", "*")}, string(os.PathListSeparator))
	})
	if jarOnce.err != nil {
		t.Fatalf("building the lab launcher (mvn -f jvm/pom.xml -pl lab package; Java 17 and Maven, as make jvm-test): %v\n%s", jarOnce.err, jarOnce.out)
	}
	return jarOnce.classpath
}

// javaCommand is the launcher in mode with args, in a JVM with a small heap (the machine runs
// several of them beside the tests).
func javaCommand(t testing.TB, heap string, mode string, args ...string) *exec.Cmd {
	t.Helper()
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	// Serial GC: no GC threads competing for the machine's cores. The JIT stays at its default:
	// with C1 only, one scrape of a broker's JMX exporter takes seconds instead of about one.
	jvmArgs := []string{"-Xms64m", "-Xmx" + heap, "-XX:+UseSerialGC",
		"-cp", classpath(t), "dev.strata.lab.Lab", mode}
	return exec.Command(java, append(jvmArgs, args...)...)
}
