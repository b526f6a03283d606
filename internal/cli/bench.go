package cli

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/bench"
)

var benchUsage = usageText("bench")

// runBench is "quiver bench", and its hidden children: the processes
// quiver bench starts (fake-model, baseline, serve-probe, mcp-server).
func runBench(ctx context.Context, args []string, env app.Env) error {
	if len(args) > 0 {
		if run, ok := benchChild(args[0]); ok {
			return run(ctx, args[1:], env)
		}
	}
	return runBenchReport(ctx, args, env)
}

// benchChild is the runner of the hidden child subcommand name.
func benchChild(name string) (func(context.Context, []string, app.Env) error, bool) {
	switch name {
	case "fake-model":
		return func(ctx context.Context, _ []string, env app.Env) error { return bench.ServeFakeModel(ctx, env.Stderr) }, true
	case "baseline":
		return runBenchBaseline, true
	case "serve-probe":
		return runBenchProbe, true
	case "mcp-server":
		return func(ctx context.Context, _ []string, env app.Env) error { return bench.ServeMCPServer(ctx, env.Stderr) }, true
	}
	return nil, false
}

func runBenchBaseline(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("bench baseline")
	model := fs.String("model", "", "")
	request := fs.String("request", "", "")
	if _, err := parseArgs(fs, args, benchUsage, env.Stdout, 0, ""); err != nil {
		return err
	}
	return bench.ServeBaseline(ctx, env.Stderr, *model, *request)
}

// runBenchProbe is quiver serve (--addr, --config, --data) under
// bench.ServeProbe.
func runBenchProbe(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("bench serve-probe")
	var o app.ServeOptions
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:0", "")
	registerData(fs, &o.Data)
	if _, err := parseArgs(fs, args, benchUsage, env.Stdout, 0, ""); err != nil {
		return err
	}
	if err := serveListen(o.Addr, false); err != nil {
		return err
	}
	return bench.ServeProbe(ctx, env.Stderr, func(ctx context.Context) error { return app.Serve(ctx, o, env) })
}

// runBenchReport is the run itself: parse, run, print.
func runBenchReport(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("bench")
	o := bench.Options{DatabaseURL: env.Getenv("QUIVER_DATABASE_URL"), Progress: env.Stderr}
	var asJSON bool
	var only, rates string
	fs.BoolVar(&o.Short, "short", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&only, "only", "", "")
	fs.StringVar(&rates, "rates", "", "")
	fs.DurationVar(&o.Duration, "duration", 0, "")
	fs.Float64Var(&o.MaxRate, "max-rate", 0, "")
	if _, err := parseArgs(fs, args, benchUsage, env.Stdout, 0, ""); err != nil {
		return err
	}
	if only != "" {
		o.Only = strings.Split(only, ",")
		if err := bench.CheckOnly(o.Only); err != nil {
			return usagef("--only: %v", err)
		}
	}
	for _, f := range strings.Split(rates, ",") {
		if f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v <= 0 {
			return usagef("--rates: %q is not a positive number of turns per second", f)
		}
		o.Rates = append(o.Rates, v)
	}
	if o.Duration < 0 || (flagGiven(fs, "duration") && o.Duration < 100*time.Millisecond) {
		return usagef("--duration: give at least 100ms")
	}
	if o.MaxRate < 0 {
		return usagef("--max-rate: must not be negative")
	}
	rep, err := bench.Run(ctx, o)
	if err != nil {
		return err
	}
	if asJSON {
		return bench.WriteJSON(env.Stdout, rep)
	}
	return bench.WriteText(env.Stdout, rep)
}
