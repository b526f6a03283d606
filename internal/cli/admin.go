package cli

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	dtmconfig "github.com/quiverhq/quiver/deliberate"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/netguard"
)

var (
	serveUsage      = usageText("serve")
	loginLinkUsage  = usageText("login-link")
	secretsUsage    = usageText("secrets")
	migrateUsage    = usageText("migrate")
	exportUsage     = usageText("export")
	importUsage     = usageText("import")
	agentUsage      = usageText("agent")
	agentCheckUsage = usageText("agent-check")
	intentUsage     = usageText("intent")
	triggersUsage   = usageText("triggers")
)

func runServe(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("serve")
	var o app.ServeOptions
	var public bool
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:8080", "")
	fs.BoolVar(&public, "public", false, "")
	fs.BoolVar(&o.SecureCookies, "secure-cookies", false, "")
	fs.DurationVar(&o.Grace, "grace", 30*time.Second, "")
	registerData(fs, &o.Data)
	if _, err := parseArgs(fs, args, serveUsage, env.Stdout, 0, ""); err != nil {
		return err
	}
	if o.Grace < 0 {
		return usagef("--grace: must not be negative")
	}
	if err := serveListen(o.Addr, public); err != nil {
		return err
	}
	return app.Serve(ctx, o, env)
}

// serveListen accepts a host:port that netguard.CheckListenHost allows.
func serveListen(addr string, public bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--addr %q: give HOST:PORT, e.g. 127.0.0.1:8080", addr)
	}
	if netguard.CheckListenHost(host, public) != nil {
		return usagef("--addr %s is not a loopback address; use 127.0.0.1:PORT, or add --public to serve the network", addr)
	}
	return nil
}

func runLoginLink(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("login-link")
	var o app.LoginLinkOptions
	fs.StringVar(&o.User, "user", "admin", "")
	fs.StringVar(&o.Org, "org", "default", "")
	fs.StringVar(&o.Addr, "addr", "", "")
	registerData(fs, &o.Data)
	if _, err := parseArgs(fs, args, loginLinkUsage, env.Stdout, 0, ""); err != nil {
		return err
	}
	return app.LoginLink(ctx, o, env)
}

// runSecrets runs "quiver secrets rotate".
func runSecrets(ctx context.Context, args []string, env app.Env) error {
	if _, err := subcommand("secrets", args, secretsUsage, env.Stdout, "rotate"); err != nil {
		return err
	}
	fs := newFlags("secrets rotate")
	var o app.SecretsRotateOptions
	registerData(fs, &o.Data)
	if _, err := parseArgs(fs, args[1:], secretsUsage, env.Stdout, 0, "takes no arguments"); err != nil {
		return err
	}
	return app.SecretsRotate(ctx, o, env)
}

// runAgent runs "quiver agent check".
func runAgent(ctx context.Context, args []string, env app.Env) error {
	if _, err := subcommand("agent", args, agentUsage, env.Stdout, "check"); err != nil {
		return err
	}
	fs := newFlags("agent check")
	var o app.AgentCheckOptions
	registerAdmin(fs, &o.MCPAdmin)
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parseArgs(fs, args[1:], agentCheckUsage, env.Stdout, 1, "give exactly one agent FILE")
	if err != nil {
		return err
	}
	o.File = pos[0]
	return app.AgentCheck(ctx, o, env)
}

func runIntent(ctx context.Context, args []string, env app.Env) error {
	fs := newFlags("intent")
	var o app.IntentOptions
	var userMode, alwaysOn string
	var hist listFlag
	var historyTurns int
	fs.StringVar(&o.Server, "server", "", "")
	fs.StringVar(&userMode, "user-mode", "follow", "")
	fs.Var(&hist, "history", "")
	fs.IntVar(&historyTurns, "history-turns", -1, "")
	fs.StringVar(&alwaysOn, "always-on", "", "")
	fs.BoolVar(&o.JSONL, "jsonl", false, "")
	fs.BoolVar(&o.JSON, "json", false, "")
	registerData(fs, &o.Data)
	pos, err := parse(fs, args, intentUsage, env.Stdout)
	if err != nil {
		return err
	}
	if o.UserMode, err = intent.ParseUserMode(userMode); err != nil {
		return usagef("--user-mode: %v", err)
	}
	if historyTurns > intent.MaxHistoryTurns {
		return usagef("--history-turns: use 0–%d", intent.MaxHistoryTurns)
	}
	if historyTurns >= 0 {
		o.HistoryTurns = &historyTurns
	}
	if alwaysOn != "" {
		gate, err := intent.ParseAlwaysOn(alwaysOn)
		if err != nil {
			return usagef("--always-on: %v", err)
		}
		o.GateAlwaysOn = &gate
	}
	switch {
	case o.JSONL && len(pos) > 0:
		return usagef("intent: --jsonl reads messages from standard input; give no MESSAGE")
	case !o.JSONL && len(pos) != 1:
		return usagef("intent: give one MESSAGE")
	case !o.JSONL:
		o.Message = pos[0]
	}
	o.History = hist
	return app.Intent(ctx, o, env)
}

func runTriggers(ctx context.Context, args []string, env app.Env) error {
	sub, err := subcommand("triggers", args, triggersUsage, env.Stdout, "list", "add", "remove", "mode", "user")
	if err != nil {
		return err
	}
	fs := newFlags("triggers " + sub)
	o := app.TriggersOptions{Action: sub}
	var history int
	var alwaysOn, shift string
	fs.StringVar(&o.Server, "server", "", "")
	fs.StringVar(&o.Target, "target", "", "")
	fs.StringVar(&o.User, "user", "", "")
	fs.IntVar(&history, "history", 0, "")
	fs.StringVar(&alwaysOn, "always-on", "", "")
	fs.StringVar(&shift, "classifier-shift", "", "")
	registerData(fs, &o.Data)
	fs.BoolVar(&o.JSON, "json", false, "")
	pos, err := parse(fs, args[1:], triggersUsage, env.Stdout)
	if err != nil {
		return err
	}
	if o.Server == "" {
		return usagef("triggers %s: --server is required", sub)
	}
	if err := triggersArgs(&o, pos, flagGiven(fs, "history"), history, alwaysOn); err != nil {
		return err
	}
	if err := shiftArg(&o, flagGiven(fs, "classifier-shift"), shift); err != nil {
		return err
	}
	return app.Triggers(ctx, o, env)
}

// shiftArg puts mode's --classifier-shift (a number, or default) in o's
// change; given with another subcommand, it is a usage error.
func shiftArg(o *app.TriggersOptions, given bool, v string) error {
	switch {
	case !given:
		return nil
	case o.Action != "mode":
		return usagef("triggers %s: --classifier-shift applies to mode only", o.Action)
	case strings.EqualFold(strings.TrimSpace(v), "default"):
		o.Change.DeploymentShift = true
		return nil
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err == nil {
		err = dtmconfig.CheckClassifierShift(x)
	}
	if err != nil {
		return usagef("triggers mode: --classifier-shift %q: use a number from -0.5 to 0.5, or default", v)
	}
	o.Change.ClassifierShift = &x
	return nil
}

// triggersArgs checks the subcommand's arguments and puts them in o;
// mode's --history and --always-on are checked (given, for --history)
// and become its change. app.Triggers checks the phrase and the mode.
func triggersArgs(o *app.TriggersOptions, pos []string, historySet bool, history int, alwaysOn string) error {
	switch o.Action {
	case "add", "remove":
		if len(pos) != 1 {
			return usagef("triggers %s: give one PHRASE", o.Action)
		}
		o.Phrase = pos[0]
	case "mode":
		if len(pos) != 1 || (pos[0] != "on" && pos[0] != "off") {
			return usagef("triggers mode: give on or off")
		}
		o.Change.Enabled = pos[0] == "on"
		if historySet {
			if err := dtmconfig.CheckHistoryTurns(history); err != nil {
				return usagef("triggers mode: --history: %v", err)
			}
			o.Change.HistoryTurns = &history
		}
		if alwaysOn != "" {
			gate, err := intent.ParseAlwaysOn(alwaysOn)
			if err != nil {
				return usagef("triggers mode: --always-on: %v", err)
			}
			o.Change.GateAlwaysOn = &gate
		}
	case "user":
		if o.User == "" || len(pos) != 1 {
			return usagef("triggers user: give --user NAME and one of off, follow, on")
		}
		o.UserMode = pos[0]
	case "list":
		if len(pos) != 0 {
			return usagef("triggers list: takes no arguments")
		}
	}
	return nil
}

// runMigrate runs "quiver migrate up|status".
func runMigrate(ctx context.Context, args []string, env app.Env) error {
	sub, err := subcommand("migrate", args, migrateUsage, env.Stdout, "up", "status")
	if err != nil {
		return err
	}
	fs := newFlags("migrate " + sub)
	o := app.MigrateOptions{Up: sub == "up"}
	registerData(fs, &o.Data)
	fs.BoolVar(&o.JSON, "json", false, "")
	if _, err := parseArgs(fs, args[1:], migrateUsage, env.Stdout, 0, "takes no arguments"); err != nil {
		return err
	}
	if o.Up && o.JSON {
		return usagef("migrate up: --json goes with status")
	}
	return app.Migrate(ctx, o, env)
}

// runArchive runs "quiver export" (import false) or "quiver import":
// --out or --in FILE, required, and no argument.
func runArchive(ctx context.Context, args []string, env app.Env, imp bool) error {
	name, flagName, text := "export", "out", exportUsage
	if imp {
		name, flagName, text = "import", "in", importUsage
	}
	fs := newFlags(name)
	o := app.ArchiveOptions{Import: imp}
	fs.StringVar(&o.File, flagName, "", "")
	if !imp {
		fs.BoolVar(&o.Gzip, "gzip", false, "")
	}
	fs.BoolVar(&o.JSON, "json", false, "")
	registerData(fs, &o.Data)
	if _, err := parseArgs(fs, args, text, env.Stdout, 0, ""); err != nil {
		return err
	}
	if o.File == "" {
		return usagef("%s: --%s FILE is required", name, flagName)
	}
	return app.Archive(ctx, o, env)
}
