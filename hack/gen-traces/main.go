// Command gen-traces writes the sample load traces of internal/simulate into
// config/samples/traces (make traces), for `strata simulate` and its benchmark.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/strata-dev/strata/internal/simulate"
)

func main() {
	dir := filepath.Join("config", "samples", "traces")
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	traces := simulate.SampleTraces()
	names := make([]string, 0, len(traces))
	for n := range traces {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(dir, n+".csv")
		if err := os.WriteFile(path, traces[n].CSV(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("wrote", path)
	}
}
