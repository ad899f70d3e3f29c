package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestShufflePluginJar: spec.spark.shuffle.pluginJar takes a jar path in the image or a URL,
// one jar (it joins the comma-separated spark.jars), and admission names the field otherwise.
func TestShufflePluginJar(t *testing.T) {
	for _, tt := range []struct {
		jar string
		ok  bool
	}{
		{"local:///opt/strata/strata-shuffle.jar", true},
		{"https://repo.example/strata/strata-shuffle-0.1.0.jar", true},
		{"s3a://bucket/jars/strata-shuffle.jar", true},
		{"/opt/strata/strata-shuffle.jar", false},
		{"local:///opt/a.jar,local:///opt/b.jar", false},
		{"https://repo.example/strata-shuffle.zip", false},
		{"local:///opt/my jars/strata-shuffle.jar", false},
	} {
		u := pipeline(t)
		// A dry run still refuses a name that exists, and TestSamplesAccepted created the sample.
		u.SetName("plugin-jar")
		set(u, "spec.spark.shuffle.pluginJar", tt.jar)
		err := k8s.Create(context.Background(), u, client.DryRunAll)
		switch {
		case tt.ok && err != nil:
			t.Errorf("%q rejected: %v", tt.jar, err)
		case !tt.ok && err == nil:
			t.Errorf("%q accepted", tt.jar)
		case !tt.ok && !strings.Contains(err.Error(), "spec.spark.shuffle.pluginJar"):
			t.Errorf("%q rejected without naming the field: %v", tt.jar, err)
		}
	}
}
