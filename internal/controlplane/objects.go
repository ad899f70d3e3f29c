package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadObjects reads every object of the YAML files given (multi-document files allowed). A
// directory stands for its *.yaml files, sorted by name.
func ReadObjects(paths ...string) ([]*unstructured.Unstructured, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.yaml"))
		if err != nil {
			return nil, err
		}
		sort.Strings(matches)
		files = append(files, matches...)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		decoded, err := DecodeObjects(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		objs = append(objs, decoded...)
	}
	return objs, nil
}

// DecodeObjects decodes every object of a YAML or JSON stream (multi-document allowed).
func DecodeObjects(b []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// Samples reads config/samples.
func Samples() ([]*unstructured.Unstructured, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	return ReadObjects(filepath.Join(root, "config", "samples"))
}

// NewNamespace creates a namespace with a generated name, so that each test works in a fresh one.
func NewNamespace(ctx context.Context, c client.Client, prefix string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(ctx, ns); err != nil {
		return "", err
	}
	return ns.Name, nil
}

// CreateSamples creates config/samples: the tiers as they are, the pipelines in a fresh
// namespace, whose name it returns.
func CreateSamples(ctx context.Context, c client.Client, prefix string) (string, error) {
	ns, err := NewNamespace(ctx, c, prefix)
	if err != nil {
		return "", err
	}
	samples, err := Samples()
	if err != nil {
		return "", err
	}
	for _, s := range samples {
		if s.GetKind() == "AnalyticsPipeline" {
			s.SetNamespace(ns)
		}
		if err := c.Create(ctx, s); err != nil {
			return "", fmt.Errorf("creating sample %s %s: %w", s.GetKind(), s.GetName(), err)
		}
	}
	return ns, nil
}
