// Command strata shows what the Strata operator would do, without a cluster:
//
//	strata plan -f pipeline.yaml -f tiers.yaml [-o json]
//	strata render -f pipeline.yaml -f tiers.yaml [-o json]
//	strata simulate -f pipeline.yaml -f tiers.yaml --trace trace.csv [-o json] [--plot out.svg]
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/strata-dev/strata/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
