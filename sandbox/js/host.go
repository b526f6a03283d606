package js

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"modernc.org/quickjs"

	"github.com/quiverhq/quiver/sandbox"
)

// output collects what the script prints, up to a limit.
type output struct {
	text strings.Builder
	// truncated reports that something printed was cut; full that the
	// limit was reached, which stops the script.
	truncated, full bool
}

// add appends one printed line (s and a newline) and reports whether the
// output is now full. Past limit bytes, s is cut at a character boundary
// and nothing more is kept.
func (o *output) add(s string, limit int) bool {
	if o.full {
		return true
	}
	room := limit - o.text.Len()
	if len(s)+1 <= room {
		o.text.WriteString(s)
		o.text.WriteByte('\n')
		return false
	}
	o.text.WriteString(cut(s, room))
	o.truncated, o.full = true, true
	return true
}

// cut returns the longest prefix of s of at most n bytes that ends on a
// character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// print is console.log's host side: boot.js hands it one string, already
// cut to a little over the limit. Once the output is full it interrupts
// the script, which cannot catch that.
func (r *run) print(args []any) (any, error) {
	s, _ := arg(args, 0).(string)
	if r.out.add(s, r.lim.OutputBytes) {
		r.vm.Interrupt()
	}
	return nil, nil
}

// read is workspace.read: the file's content as a string.
func (r *run) read(args []any) (any, error) {
	return r.guard("read", func() (any, error) {
		p, err := pathArg(args, 0, "path", sandbox.CheckPath)
		if err != nil {
			return nil, err
		}
		data, err := r.job.Workspace.ReadFile(p)
		if err != nil {
			return nil, err
		}
		return string(data), nil
	})
}

// write is workspace.write: it creates or replaces a file with a text.
func (r *run) write(args []any) (any, error) {
	return r.guard("write", func() (any, error) {
		p, err := pathArg(args, 0, "path", sandbox.CheckPath)
		if err != nil {
			return nil, err
		}
		text, ok := arg(args, 1).(string)
		if !ok {
			return nil, fmt.Errorf("text must be a string, not %s (use JSON.stringify for data)", jsType(arg(args, 1)))
		}
		if len(text) > sandbox.MaxWriteBytes {
			return nil, fmt.Errorf("the text is %d bytes long; the limit is %d bytes", len(text), sandbox.MaxWriteBytes)
		}
		return nil, r.job.Workspace.WriteFile(p, []byte(text))
	})
}

// list is workspace.list: the names in a folder, "." by default.
func (r *run) list(args []any) (any, error) {
	return r.guard("list", func() (any, error) {
		p, err := pathArg(args, 0, "folder", sandbox.CheckFolder)
		if err != nil {
			return nil, err
		}
		names, err := r.job.Workspace.ListFiles(p)
		if err != nil {
			return nil, err
		}
		if names == nil {
			names = []string{}
		}
		return names, nil
	})
}

// guard runs one workspace call, prefixing its error with the call's name
// for the script. A Workspace that panics is a server bug: the panic is
// kept for Run to return, and the script is interrupted, instead of the
// panic going up through the interpreter, which would leave the VM unusable
// and its memory leaked.
func (r *run) guard(op string, f func() (any, error)) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.infra = fmt.Errorf("sandbox/js: workspace %s panicked: %v", op, p)
			r.vm.Interrupt()
			v, err = nil, fmt.Errorf("workspace.%s failed", op)
		}
	}()
	v, err = f()
	if err != nil {
		return nil, fmt.Errorf("workspace.%s: %w", op, err)
	}
	return v, nil
}

// pathArg returns argument i, which must be a string, checked by check.
func pathArg(args []any, i int, what string, check func(string) (string, error)) (string, error) {
	p, ok := arg(args, i).(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string, not %s", what, jsType(arg(args, i)))
	}
	return check(p)
}

// arg returns args[i], or undefined when the script passed fewer.
func arg(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return quickjs.Undefined{}
}

// jsType names the JavaScript type of a converted argument, for messages.
func jsType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case quickjs.Undefined:
		return "undefined"
	case bool:
		return "a boolean"
	case int, float64:
		return "a number"
	case *quickjs.Object:
		return "an object"
	}
	return "a value of another type"
}
