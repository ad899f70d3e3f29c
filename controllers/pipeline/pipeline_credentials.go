package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"math/big"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// credentialsStep finds the password of the job's Elasticsearch user, so that the desired
// user Secret (desired.ElasticsearchUserSecret) carries the one it already has: a password is
// generated once, when the Secret does not exist, and never again while it does (an apply
// then rewrites nothing, and a password someone put into the Secret stays; ECK rehashes it).
//
// The cache may not have seen the Secret the last reconcile created; before generating, the
// API server is asked, so a lagging cache never makes a second password. The Kafka
// credentials need nothing here: the User Operator generates the KafkaUser's password and
// keeps it in its own Secret.
func (r *Reconciler) credentialsStep(ctx context.Context, s *scope) error {
	if !s.planned {
		return nil
	}
	p := s.pipeline
	key := ssa.Key{GVK: desired.SecretGVK, Namespace: p.Namespace, Name: desired.ElasticsearchUserSecretName(p)}
	if pw := unstructuredSecretValue(s.observed[key], desired.ESUserSecretPasswordKey); pw != "" {
		s.esPassword = pw
		return nil
	}
	live := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, live)
	switch {
	case err == nil && len(live.Data[desired.ESUserSecretPasswordKey]) > 0:
		s.esPassword = string(live.Data[desired.ESUserSecretPasswordKey])
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("reading Secret %s: %w", key.Name, err)
	}
	pw, err := newPassword(desired.ESPasswordLength)
	if err != nil {
		return err
	}
	s.esPassword = pw
	return nil
}

// unstructuredSecretValue decodes one key of a Secret read as unstructured content ("" when the
// Secret or the key is missing, or the value is not base64).
func unstructuredSecretValue(u *unstructured.Unstructured, key string) string {
	if u == nil {
		return ""
	}
	enc, _, _ := unstructured.NestedString(u.Object, "data", key)
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return ""
	}
	return string(b)
}

// passwordAlphabet: letters and digits only, so that the password needs no quoting in a JAAS
// line, a shell or a YAML file.
const passwordAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newPassword returns n characters drawn uniformly from passwordAlphabet by crypto/rand.
func newPassword(n int) (string, error) {
	out := make([]byte, n)
	limit := big.NewInt(int64(len(passwordAlphabet)))
	for i := range out {
		k, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return "", fmt.Errorf("generating a password: %w", err)
		}
		out[i] = passwordAlphabet[k.Int64()]
	}
	return string(out), nil
}
