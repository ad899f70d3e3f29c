#!/usr/bin/env bash
# Builds Strimzi's cluster operator, Topic Operator and User Operator ($STRIMZI_VERSION in
# hack/versions.env) from their source into bin/strimzi-$STRIMZI_VERSION, for the upstream harness (internal/upstream,
# docs/upstream.md): neither is published as a jar. About 15 minutes of Maven on two cores.
#
#   hack/strimzi.sh            clone the tag from GitHub (needs the internet) and build it
#   STRIMZI_SRC=DIR hack/strimzi.sh   build the source tree in DIR (a checkout of the tag)
#
# Strimzi 1.2.0 needs Java 21 or newer ($STRIMZI_JAVA_HOME, default the Temurin 25 the project's
# machines have) and these changes to build from Maven Central alone, none of which changes the
# operator's code:
#   - javac -proc:full (Java 23 and newer run annotation processors, Lombok here, only when
#     asked), which needs maven-compiler-plugin 3.13.0;
#   - Lombok 1.18.42 (1.18.32 crashes on Java 25 with "TypeTag :: UNKNOWN");
#   - fabric8's openshift-client 7.7.0 (7.8.0's dependencies are not all on Maven Central);
#   - fabric8's openshift-model and openshift-client-api at that version too;
#   - the operators' test-only dependencies dropped
#     (strimzi-test-container and fault-injection-source-connector are not on Maven Central;
#     operator-common's test jar is not built), tests not built.
# Output: lib/ (the cluster operator's jar and its dependencies), crds/ (Strimzi's CRDs),
# deployment.yaml (the cluster operator's Deployment, whose environment the harness uses),
# topic-operator/lib/ and user-operator/lib/ (each operator's jar and its dependencies).
# Installs Strimzi's own modules it builds (io.strimzi:*:$STRIMZI_VERSION) into the local Maven
# repository: the configuration model generator resolves config-model from there.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC1091
source <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$root/hack/versions.env")
out="$root/bin/strimzi-$STRIMZI_VERSION"
java_home=${STRIMZI_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
say() { printf '[strimzi] %s\n' "$*" >&2; }

if [ -f "$out/.built" ] && [ -d "$out/topic-operator/lib" ] && [ -d "$out/user-operator/lib" ]; then
  echo "$out"
  exit 0
fi
[ -x "$java_home/bin/java" ] || { say "no Java 21+ at $java_home: set STRIMZI_JAVA_HOME"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=${STRIMZI_SRC:-}
if [ -z "$src" ]; then
  say "cloning strimzi-kafka-operator $STRIMZI_VERSION"
  git clone -q --depth 1 --branch "$STRIMZI_VERSION" https://github.com/strimzi/strimzi-kafka-operator "$work/src"
else
  say "copying $src"
  cp -r "$src" "$work/src"
fi
cd "$work/src"

# The test-only dependencies Maven Central does not have (or that tests not built do not make),
# and openshift-model and openshift-client-api at openshift-client's version (the root pom
# gives them the Kubernetes client's 7.8.0).
python3 - <<'PY'
import re
for p in ['cluster-operator/pom.xml', 'topic-operator/pom.xml', 'user-operator/pom.xml']:
    s = open(p).read()
    for art in ['strimzi-test-container', 'fault-injection-source-connector']:
        s = re.sub(r'\s*<dependency>\s*<groupId>[^<]*</groupId>\s*<artifactId>' + art +
                   r'</artifactId>(\s*<version>[^<]*</version>)?(\s*<scope>test</scope>)?\s*</dependency>', '', s)
    s = re.sub(r'\s*<dependency>\s*<groupId>io.strimzi</groupId>\s*<artifactId>operator-common</artifactId>\s*'
               r'(<version>[^<]*</version>\s*)?<classifier>tests</classifier>\s*<type>test-jar</type>\s*<scope>test</scope>\s*</dependency>', '', s)
    open(p, 'w').write(s)
p = 'pom.xml'
s = open(p).read()
for art in ['openshift-model', 'openshift-client-api']:
    s = re.sub(r'(<artifactId>' + art + r'</artifactId>\s*<version>)\$\{[^}]*\}(</version>)',
               r'\g<1>${fabric8.openshift-client.version}\2', s)
open(p, 'w').write(s)
PY

say "building the cluster operator with Maven (about 12 minutes)"
export JAVA_HOME="$java_home" PATH="$java_home/bin:$PATH"
flags=(-B -ntp -q -Dmaven.test.skip=true -DskipTests -Dspotbugs.skip=true -Dcheckstyle.skip=true
  -Dmaven.javadoc.skip=true -Djacoco.skip=true -Dmdep.analyze.skip=true
  -Dmaven.compiler.version=3.13.0 -Dmaven.compiler.proc=full
  -Dlombok.version=1.18.42 -Dfabric8.openshift-client.version=7.7.0)
# The Kafka configuration models the operator validates a Kafka's config against, one per
# supported Kafka version (kafka-versions.yaml), generated from each version's own jars as
# Strimzi's config-model-generator/build-config-models.sh does; the generator needs config-model
# in the local Maven repository.
mvn "${flags[@]}" -pl config-model -am install
python3 -c '
import yaml
for e in yaml.safe_load(open("kafka-versions.yaml")):
    if e.get("supported"):
        print(e["version"], e.get("maven-version", e["version"]))
' | while read -r version maven; do
  say "Kafka $version's configuration model"
  (cd config-model-generator && mvn "${flags[@]}" verify exec:java -Pgenerate-model \
    -Dkafka-metadata-version="$maven" \
    -Dconfig-model-file="../cluster-operator/src/main/resources/kafka-$version-config-model.json")
done
mvn "${flags[@]}" -pl cluster-operator -am -DincludeScope=runtime -DoutputDirectory="$work/lib" \
  package dependency:copy-dependencies
for op in topic-operator user-operator; do
  say "building the $op"
  mvn "${flags[@]}" -pl "$op" -am -DincludeScope=runtime -DoutputDirectory="$work/$op-lib" \
    package dependency:copy-dependencies
done

rm -rf "$out"
mkdir -p "$out/lib" "$out/crds"
cp "$work"/lib/*.jar "$out/lib/"
cp cluster-operator/target/cluster-operator-"$STRIMZI_VERSION".jar "$out/lib/"
cp packaging/install/cluster-operator/04*-Crd-*.yaml "$out/crds/"
cp packaging/install/cluster-operator/060-Deployment-strimzi-cluster-operator.yaml "$out/deployment.yaml"
for op in topic-operator user-operator; do
  mkdir -p "$out/$op/lib"
  cp "$work/$op-lib"/*.jar "$op/target/$op-$STRIMZI_VERSION.jar" "$out/$op/lib/"
done
touch "$out/.built"
say "built into $out"
echo "$out"
