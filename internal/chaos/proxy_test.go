package chaos

import (
	"bytes"
	"compress/gzip"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// TestLeaseHolder reads the holder from a Lease however the API server encoded it.
func TestLeaseHolder(t *testing.T) {
	lease := &coordinationv1.Lease{TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("host_1234")}}
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			t.Fatalf("no serializer for %s", mediaType)
		}
		var b bytes.Buffer
		if err := scheme.Codecs.EncoderForVersion(info.Serializer, coordinationv1.SchemeGroupVersion).Encode(lease, &b); err != nil {
			t.Fatal(err)
		}
		if got := leaseHolder(b.Bytes(), ""); got != "host_1234" {
			t.Errorf("%s: holder %q", mediaType, got)
		}
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = zw.Write(b.Bytes())
		_ = zw.Close()
		if got := leaseHolder(z.Bytes(), "gzip"); got != "host_1234" {
			t.Errorf("%s, gzip: holder %q", mediaType, got)
		}
	}
	if got := leaseHolder([]byte(`{"kind":"Status"}`), ""); got != "" {
		t.Errorf("a Status: holder %q", got)
	}
}
