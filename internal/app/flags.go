package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// UsageError is bad input from the command line or a file it names. The CLI
// prints it on one line and exits with status 2, having written nothing.
type UsageError struct{ Msg string }

// Error returns Msg.
func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
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

// register adds the flags that say who a turn is for and with which
// agent: --agent, --model, --user, --org, --department and --tz.
func (in *TurnInput) register(fs *flag.FlagSet) {
	fs.StringVar(&in.AgentFile, "agent", "", "")
	fs.StringVar(&in.Model, "model", "", "")
	fs.StringVar(&in.Caller.User, "user", "", "")
	fs.StringVar(&in.Caller.Org, "org", "", "")
	fs.StringVar(&in.Caller.Department, "department", "", "")
	fs.StringVar(&in.Caller.Timezone, "tz", "", "")
}

// register adds --config and --data.
func (f *dataFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "")
	fs.StringVar(&f.data, "data", "", "")
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
