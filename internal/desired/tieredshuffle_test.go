package desired

import (
	"testing"
)

// TestTieredShuffleWiring: with the shuffle data on another tier than spill, the job gets the
// tiered shuffle plugin (its manager, its jar after the user's jars, the data dir on the data
// volume); on one tier it is stock Spark.
func TestTieredShuffleWiring(t *testing.T) {
	split := SparkConf(splitTiers(t))
	for k, want := range map[string]string{
		"spark.shuffle.manager":                            ShuffleManagerClass,
		"spark.jars":                                       "local:///opt/strata/strata-shuffle.jar",
		ShuffleDataDirsConf:                                ShuffleDataMountPath,
		"spark.shuffle.service.enabled":                    "false",
		"spark.storage.decommission.shuffleBlocks.enabled": "false",
	} {
		if split[k] != want {
			t.Errorf("split tiers: %s = %q, want %q", k, split[k], want)
		}
	}

	single := SparkConf(singleTierDelete(t))
	for _, k := range []string{"spark.shuffle.manager", "spark.jars", ShuffleDataDirsConf,
		"spark.shuffle.service.enabled", "spark.storage.decommission.shuffleBlocks.enabled"} {
		if v, ok := single[k]; ok {
			t.Errorf("one tier: %s = %q, want it unset (stock Spark)", k, v)
		}
	}

	// The user's jars stay, in order, the plugin's jar once after them; the user's own
	// shuffle manager and shuffle service lose to the plugin's wiring.
	in := splitTiers(t)
	in.Pipeline.Spec.Spark.Shuffle.PluginJar = "https://repo.example/strata-shuffle-0.1.0.jar"
	in.Pipeline.Spec.Spark.SparkConf["spark.jars"] = " local:///opt/app/lib/a.jar,,https://repo.example/strata-shuffle-0.1.0.jar, local:///opt/app/lib/b.jar"
	in.Pipeline.Spec.Spark.SparkConf["spark.shuffle.manager"] = "sort"
	in.Pipeline.Spec.Spark.SparkConf["spark.shuffle.service.enabled"] = "true"
	conf := SparkConf(in)
	if got, want := conf["spark.jars"], "local:///opt/app/lib/a.jar,local:///opt/app/lib/b.jar,https://repo.example/strata-shuffle-0.1.0.jar"; got != want {
		t.Errorf("spark.jars = %q, want %q", got, want)
	}
	if conf["spark.shuffle.manager"] != ShuffleManagerClass || conf["spark.shuffle.service.enabled"] != "false" {
		t.Errorf("the plugin's wiring must win: manager %q, shuffle service %q",
			conf["spark.shuffle.manager"], conf["spark.shuffle.service.enabled"])
	}

	// One tier: the user's jars are left alone.
	in = singleTierDelete(t)
	in.Pipeline.Spec.Spark.SparkConf = map[string]string{"spark.jars": "local:///opt/app/lib/a.jar"}
	if got := SparkConf(in)["spark.jars"]; got != "local:///opt/app/lib/a.jar" {
		t.Errorf("one tier: spark.jars = %q, want the user's", got)
	}
}

func TestAppendJar(t *testing.T) {
	for _, tt := range []struct{ jars, jar, want string }{
		{"", "x.jar", "x.jar"},
		{"a.jar", "x.jar", "a.jar,x.jar"},
		{"x.jar, a.jar", "x.jar", "a.jar,x.jar"},
		{" , ", "x.jar", "x.jar"},
	} {
		if got := appendJar(tt.jars, tt.jar); got != tt.want {
			t.Errorf("appendJar(%q, %q) = %q, want %q", tt.jars, tt.jar, got, tt.want)
		}
	}
}
