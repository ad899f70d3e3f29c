package desired

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestJobImageRecipe: the job image (jvm/Dockerfile, built by `make job-image` where a Docker
// engine runs) holds what the operator's defaults name. No Docker engine runs here, so the image
// itself is not built by the tests; this ties its recipe to the defaults instead: the base is
// apache/spark at the Spark version the operator sets and the JVM build compiles against, the
// jars land where IngestJobFile and DefaultShufflePluginJar point, copied from the names the
// Maven modules build, owned by and run as the uid the pods' fsGroup is.
func TestJobImageRecipe(t *testing.T) {
	root := filepath.Join("..", "..", "jvm")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	docker := read("Dockerfile")
	if want := "ARG SPARK_IMAGE=apache/spark:" + DefaultSparkVersion + "\n"; !strings.Contains(docker, want) {
		t.Errorf("jvm/Dockerfile: no %q", strings.TrimSpace(want))
	}
	if m := regexp.MustCompile(`<spark.version>([^<]+)</spark.version>`).FindStringSubmatch(read("pom.xml")); m == nil || m[1] != DefaultSparkVersion {
		t.Errorf("jvm/pom.xml spark.version %v, want %s", m, DefaultSparkVersion)
	}
	uid := fmt.Sprint(DefaultFSGroup)
	if !strings.Contains(docker, "\nUSER "+uid+"\n") {
		t.Errorf("jvm/Dockerfile: no USER %s", uid)
	}
	copies := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^COPY --chown=(\S+) (\S+) (\S+)$`).FindAllStringSubmatch(docker, -1) {
		if m[1] != uid+":"+uid {
			t.Errorf("jvm/Dockerfile: COPY %s owned by %s, want %s:%s", m[2], m[1], uid, uid)
		}
		copies[m[3]] = m[2]
	}
	for module, jar := range map[string]string{"ingest-job": IngestJobFile, "shuffle-plugin": DefaultShufflePluginJar} {
		dest := strings.TrimPrefix(jar, "local://")
		src, ok := copies[dest]
		if !ok {
			t.Errorf("jvm/Dockerfile copies nothing to %s (%s)", dest, jar)
			continue
		}
		m := regexp.MustCompile(`<finalName>([^<]+)</finalName>`).FindStringSubmatch(read(filepath.Join(module, "pom.xml")))
		if m == nil || src != module+"/target/"+m[1]+".jar" {
			t.Errorf("jvm/Dockerfile copies %s to %s; jvm/%s builds %v", src, dest, module, m)
		}
	}
}
