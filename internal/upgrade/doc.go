// Package upgrade is the upgrade test (`make upgrade-test`, docs/upgrade.md): the previous
// tagged release (hack/versions.env: PREVIOUS_RELEASE and the commit it tags) installed with Helm
// on the upstream harness (internal/upstream: real kube-apiserver, kube-controller-manager,
// kube-scheduler, KWOK, ECK, the Spark operator), its operator built from that release's source
// and run as a process, reconciling a pipeline of every golden case; then upgraded as a user
// does — the new CRDs applied server-side, `helm upgrade`, the new operator (the working tree's)
// in the old one's place — and held to the release notes: every write to a child counted per
// kind and field manager, and every change to a pod template (a Kafka's, a node pool's, an
// Elasticsearch's node sets', the SparkApplication's, each of which rolls pods or resubmits the
// job) must be one CHANGELOG.md lists in a marked list (AllowedChanges). The pipelines and tiers
// stored under the old CRDs must be valid under the new ones.
//
// The pure parts (the release's resolution, the changelog's list, the pod template diff) are
// tested in `make test`; the upgrade itself runs only with STRATA_UPGRADE_TEST=1, which `make
// upgrade-test` sets: it builds two managers and runs every golden case on real controllers.
package upgrade
