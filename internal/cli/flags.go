package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/quiverhq/quiver/internal/app"
)

// usagef is bad input: an *app.UsageError, printed on one line, exit 2.
func usagef(format string, args ...any) error {
	return &app.UsageError{Msg: fmt.Sprintf(format, args...)}
}

// errHelp reports that --help was asked for and the usage was printed.
var errHelp = errors.New("help requested")

// newFlags returns a flag set that reports errors instead of printing them.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args allowing flags before and after positional arguments;
// everything after "--" is positional. On -h/--help it prints usage to w and
// returns errHelp.
func parse(fs *flag.FlagSet, args []string, usage string, w io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(w, usage)
				return nil, errHelp
			}
			return nil, usagef("%s: %s", fs.Name(), firstLine(err.Error()))
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// parseArgs is parse, then exactly n positional arguments: other counts
// are the usage error "NAME: want", or with want "" `NAME: unexpected
// argument "X"`.
func parseArgs(fs *flag.FlagSet, args []string, usage string, w io.Writer, n int, want string) ([]string, error) {
	pos, err := parse(fs, args, usage, w)
	switch {
	case err != nil:
		return nil, err
	case len(pos) == n:
		return pos, nil
	case want == "" && len(pos) > n:
		return nil, usagef("%s: unexpected argument %q", fs.Name(), pos[n])
	}
	return nil, usagef("%s: %s", fs.Name(), want)
}

// subcommand is the subcommand of "quiver GROUP ...": args[0] when it is
// one of names. With no subcommand, or one not in names, it is bad input;
// with help it prints usage to w and returns errHelp.
func subcommand(group string, args []string, usage string, w io.Writer, names ...string) (string, error) {
	if len(args) == 0 {
		return "", usagef(`%s: no subcommand given (run "quiver %s --help")`, group, group)
	}
	switch sub := args[0]; {
	case isHelp(sub):
		fmt.Fprint(w, usage)
		return "", errHelp
	case slices.Contains(names, sub):
		return sub, nil
	default:
		return "", usagef("%s: unknown subcommand %q (%s)", group, sub, strings.Join(names, ", "))
	}
}

func isHelp(s string) bool { return s == "-h" || s == "--help" || s == "-help" || s == "help" }

// flagGiven reports whether the command line set the flag.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// registerTurn adds the flags that say who a turn is for and with which
// agent: --agent, --model, --user, --org, --department and --tz.
func registerTurn(fs *flag.FlagSet, in *app.TurnInput) {
	fs.StringVar(&in.AgentFile, "agent", "", "")
	fs.StringVar(&in.Model, "model", "", "")
	fs.StringVar(&in.Caller.User, "user", "", "")
	fs.StringVar(&in.Caller.Org, "org", "", "")
	fs.StringVar(&in.Caller.Department, "department", "", "")
	fs.StringVar(&in.Caller.Timezone, "tz", "", "")
}

// registerData adds --config and --data.
func registerData(fs *flag.FlagSet, d *app.Data) {
	fs.StringVar(&d.Config, "config", "", "")
	fs.StringVar(&d.Dir, "data", "", "")
}

// registerAdmin adds --org, --config and --data, the MCP registration
// commands' flags.
func registerAdmin(fs *flag.FlagSet, a *app.MCPAdmin) {
	fs.StringVar(&a.Org, "org", "", "")
	registerData(fs, &a.Data)
}
