package desired

import (
	"encoding/base64"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// SecretGVK is the kind of the job's Elasticsearch user and role Secrets.
var SecretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// ComponentElasticsearchUser is the LabelComponent of the job's Elasticsearch user and role.
const ComponentElasticsearchUser = "elasticsearch-user"

// The job's own Elasticsearch identity, given to ECK through the Elasticsearch's spec.auth
// (elastic/cloud-on-k8s v3.5.0, pkg/apis/elasticsearch/v1/elasticsearch_types.go: Auth,
// FileRealmSource, RoleSource):
//   - the user Secret is of type kubernetes.io/basic-auth with the keys username, password and
//     roles (comma-separated). ECK reads such a file realm Secret as one user, hashes the
//     password itself and reuses the hash while the password is unchanged
//     (pkg/controller/elasticsearch/user/user_provided.go: retrieveUserProvidedFileRealm,
//     realmFromBasicAuthSecret), so the operator handles no hash (the alternative, the users
//     and users_roles keys, would need a bcrypt hash that changes with every salt);
//   - the roles Secret holds roles.yml (pkg/controller/elasticsearch/user/roles.go: RolesFile),
//     in Elasticsearch's file-based role format.
//
// ECK watches both Secrets (user_provided.go: WatchUserProvidedSecrets), so a new password or
// role reaches the cluster without touching the Elasticsearch object.
const (
	// ESUserSecretUsernameKey and ESUserSecretPasswordKey are the basic-auth Secret's keys
	// (k8s.io/api/core/v1 BasicAuthUsernameKey and BasicAuthPasswordKey).
	ESUserSecretUsernameKey = "username"
	ESUserSecretPasswordKey = "password"
	// ESUserSecretRolesKey lists the user's roles (ECK's BasicAuthSecretRolesKey).
	ESUserSecretRolesKey = "roles"
	// ESRolesKey is the roles Secret's key.
	ESRolesKey = "roles.yml"
	// ESPasswordLength is the length of the generated password (letters and digits: about 190
	// bits); ECK refuses fewer than 6 characters (user/validation.go: minPasswordLength).
	ESPasswordLength = 32
)

// ElasticsearchJobUser is the Elasticsearch user (and role) p's Spark job authenticates as.
func ElasticsearchJobUser(p *v1alpha1.AnalyticsPipeline) string { return p.Name + "-ingest" }

// ElasticsearchUserSecretName is the basic-auth Secret holding the job's Elasticsearch user.
func ElasticsearchUserSecretName(p *v1alpha1.AnalyticsPipeline) string {
	return p.Name + "-ingest-es-user"
}

// ElasticsearchRolesSecretName is the Secret holding the job's Elasticsearch role.
func ElasticsearchRolesSecretName(p *v1alpha1.AnalyticsPipeline) string {
	return p.Name + "-ingest-es-roles"
}

// ElasticsearchIndex is the index (the write alias) the job writes: the pipeline's name, a
// Kubernetes name and so a valid index name. Its backing indices are <index>-000001, … and its
// dead letters go to <index>-deadletter (jvm/ingest-job: IngestConf, IndexLifecycle).
func ElasticsearchIndex(p *v1alpha1.AnalyticsPipeline) string { return p.Name }

// ElasticsearchUserSecret builds the basic-auth Secret of p's job's Elasticsearch user. The
// password is in.ElasticsearchPassword: generated once by the controller and then read back
// from this Secret, never generated again while it exists (so an apply rewrites nothing, and
// a password a user put there stays). Without one (a dry run, `strata plan`) the Secret has no
// password key.
func ElasticsearchUserSecret(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	data := object{
		ESUserSecretUsernameKey: ElasticsearchJobUser(p),
		ESUserSecretRolesKey:    ElasticsearchJobUser(p),
	}
	if in.ElasticsearchPassword != "" {
		data[ESUserSecretPasswordKey] = in.ElasticsearchPassword
	}
	// stringData is write-only; data (base64) is what the server keeps and what a later apply
	// compares, so the builder writes data.
	return newObject(SecretGVK, p, ElasticsearchUserSecretName(p), AppElasticsearch, ComponentElasticsearchUser,
		nil, nil, object{"type": "kubernetes.io/basic-auth", "data": base64Values(data)})
}

// ElasticsearchRolesSecret builds the Secret of p's job's Elasticsearch role: what the job does
// at start and per batch (jvm/ingest-job, IndexLifecycle and PartitionWriter), on the
// pipeline's indices only.
//   - cluster: manage_ilm (PUT _ilm/policy/<index>) and manage_index_templates (the index's
//     and the dead-letter index's templates). Elasticsearch scopes neither to names: a
//     template or policy of another name could be written too, but no document read.
//   - <index> (the write alias) and <index>-* (the backing indices and <index>-deadletter):
//     create_index (the first write index, the dead-letter index), view_index_metadata (does
//     the alias exist), write (bulk), manage (creating an index with an alias needs manage on
//     the alias) and delete_index. ILM runs a policy's actions with the roles of the user who
//     last wrote the policy, which is this one: rollover needs manage on the alias, the
//     delete phase delete_index on the old indices.
//
// No read privilege: the job never searches.
//
// A job of the user's also gets cluster monitor: elasticsearch-hadoop asks the cluster's main
// endpoint (GET /, the action cluster:monitor/main) for its name and version in every writing
// task (elastic/elasticsearch-hadoop v9.3.2, mr/src/main/java/org/elasticsearch/hadoop/rest/:
// RestService.createWriter calls InitializationUtils.discoverAndValidateClusterInfo, which
// calls RestClient.mainInfo), and before a read the index's health
// (InitializationUtils.checkIndexStatus: RestClient.getHealth, GET _cluster/health/<index>).
// In WAN mode, which wiredConf sets, it never calls _nodes (InitializationUtils.validateSettings
// refuses discovery and node filters with it). monitor is what es-hadoop's documentation grants
// its user (docs/reference/kerberos.md); it reads cluster state and statistics, and writes
// nothing. Strata's job calls none of these.
func ElasticsearchRolesSecret(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	index := ElasticsearchIndex(p)
	cluster := []string{"manage_ilm", "manage_index_templates"}
	if !RunsIngestJob(p) {
		cluster = append(cluster, "monitor")
	}
	roles := map[string]any{ElasticsearchJobUser(p): map[string]any{
		"cluster": cluster,
		"indices": []any{map[string]any{
			"names":      []string{index, index + "-*"},
			"privileges": []string{"create_index", "view_index_metadata", "write", "manage", "delete_index"},
		}},
	}}
	out, err := yaml.Marshal(roles) // keys sorted: the same bytes for the same pipeline
	if err != nil {
		panic(fmt.Sprintf("desired: marshalling roles.yml: %v", err))
	}
	return newObject(SecretGVK, p, ElasticsearchRolesSecretName(p), AppElasticsearch, ComponentElasticsearchUser,
		nil, nil, object{"type": "Opaque", "data": base64Values(object{ESRolesKey: string(out)})})
}

// ElasticsearchAuth is the Elasticsearch's spec.auth: the job's user and role.
func ElasticsearchAuth(p *v1alpha1.AnalyticsPipeline) object {
	return object{
		"fileRealm": []any{object{"secretName": ElasticsearchUserSecretName(p)}},
		"roles":     []any{object{"secretName": ElasticsearchRolesSecretName(p)}},
	}
}

// base64Values encodes a Secret's data values as the API (and so an unstructured Secret)
// carries them.
func base64Values(m object) object {
	out := object{}
	for k, v := range m {
		out[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
	}
	return out
}
