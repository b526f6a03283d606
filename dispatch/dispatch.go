// Package dispatch runs one tool call for a turn: it refuses names outside
// the turn's toolset, validates arguments, applies the tool's timeout,
// recovers panics, stores oversized results, and decides which failures the
// model reads and which return to the caller.
package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
	"unicode"

	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// Defaults for Config's zero values. The quota holds thousands of
// stored results per conversation (each is over Threshold characters),
// far more than any turn reads back.
const (
	DefaultThreshold         = 8000
	DefaultPreview           = 2000
	DefaultConversationBytes = 64 << 20
	DefaultUserBytes         = 256 << 20
)

// Config configures a Dispatcher. Results is required; zero values of the
// other fields mean the documented defaults.
type Config struct {
	// Results stores bodies over Threshold.
	Results store.Results
	// Threshold is the result size, in characters, above which the body is
	// stored and the model reads a truncated preview. Zero means 8,000.
	Threshold int
	// Preview is how many characters of a stored result the model reads
	// inline. Zero means 2,000; it is capped at Threshold.
	Preview int
	// Quota bounds the stored bodies per conversation and per user, in
	// bytes: past it the oldest of that conversation, then of that user,
	// are evicted (store.Results.PutResult). A zero field means its
	// default (DefaultConversationBytes, DefaultUserBytes).
	Quota store.ResultQuota
	// IDs makes the reference ("res_…") of each stored result; nil means
	// ids.Random.
	IDs ids.Source
	// Now is the clock; nil means clock.Now.
	Now func() time.Time
	// Logger receives one record per failed call; nil means slog.Default().
	Logger *slog.Logger
}

// Dispatcher runs tool calls. It is safe for concurrent use.
type Dispatcher struct{ cfg Config }

// New returns a Dispatcher. It panics when cfg.Results is nil.
func New(cfg Config) *Dispatcher {
	if cfg.Results == nil {
		panic("dispatch: Config.Results is required")
	}
	if cfg.Threshold <= 0 {
		cfg.Threshold = DefaultThreshold
	}
	if cfg.Preview <= 0 {
		cfg.Preview = DefaultPreview
	}
	cfg.Preview = min(cfg.Preview, cfg.Threshold)
	if cfg.Quota.ConversationBytes <= 0 {
		cfg.Quota.ConversationBytes = DefaultConversationBytes
	}
	if cfg.Quota.UserBytes <= 0 {
		cfg.Quota.UserBytes = DefaultUserBytes
	}
	cfg.IDs = ids.OrRandom(cfg.IDs)
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Dispatcher{cfg: cfg}
}

// Turn is what dispatch needs of the running turn: its frozen toolset and
// the scope its handlers may reach.
type Turn struct {
	Toolset registry.Toolset
	Scope   tool.Scope
}

// Call is one tool call as the model wrote it.
type Call struct {
	ID   string
	Name string
	Args json.RawMessage
}

// Call runs c within t. Every failure the model caused or should know about
// (unknown tool, bad arguments, handler error, timeout, panic) is a Result
// with IsError set and a nil error. The error return is reserved for
// infrastructure failures: the turn's context ended, the result store
// failed, or a handler returned an error marked with tool.Infra.
func (d *Dispatcher) Call(ctx context.Context, t Turn, c Call) (tool.Result, error) {
	tl, ok := t.Toolset.Lookup(c.Name)
	if !ok {
		return Refusal(c.Name), nil
	}
	// A turn that has ended runs nothing more: without this check the
	// handler would start anyway and race the cancellation.
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("dispatch %s: %w", tl.Name(), err)
	}
	res, err := d.run(ctx, tl, t.Scope, c.Args)
	if err != nil {
		return d.classify(ctx, tl, err)
	}
	capImages(&res)
	if tl.Spec().Unstored {
		return res, nil
	}
	return d.store(ctx, t.Scope, tl.Name(), res)
}

// capImages keeps at most tool.MaxResultImages of res's images, each at
// most tool.MaxImageBytes and with an image MIME type, and says in the
// content what it dropped, so the model knows why it sees fewer.
func capImages(res *tool.Result) {
	if len(res.Images) == 0 {
		return
	}
	kept := make([]tool.Image, 0, min(len(res.Images), tool.MaxResultImages))
	var big, extra int
	for _, img := range res.Images {
		switch {
		case len(img.Data) == 0 || len(img.Data) > tool.MaxImageBytes || !strings.HasPrefix(img.MIME, "image/"):
			big++
		case len(kept) == tool.MaxResultImages:
			extra++
		default:
			kept = append(kept, img)
		}
	}
	res.Images = kept
	if big > 0 {
		res.Content += fmt.Sprintf("\n\n(%d image(s) left out: empty, not an image or over %d MiB.)", big, tool.MaxImageBytes>>20)
	}
	if extra > 0 {
		res.Content += fmt.Sprintf("\n\n(%d image(s) left out: a result carries at most %d.)", extra, tool.MaxResultImages)
	}
}

// Refusal is the whole answer to a call of a tool outside the toolset: it
// names that tool and reveals nothing else.
func Refusal(name string) tool.Result {
	return tool.Result{Content: fmt.Sprintf("Tool \"%s\" is not available.", printable(name)), IsError: true}
}

// printable keeps a model-written name to one short line of visible text.
func printable(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64]) + "…"
	}
	return s
}

// run validates the arguments and calls the handler under the tool's
// timeout. The handler runs on its own goroutine so that a handler
// ignoring its context cannot hold the turn past the timeout; a panic
// becomes errPanic. Quiver's own tools are validated before, on the
// caller's goroutine: their schemas are ours, so validation is bounded,
// and on a new goroutine the validator's recursion grew (copied) the fresh
// stack on every call, most of a small call's CPU in BenchmarkCall's
// profile. An imported tool's schema is the MCP server's, and the
// validator's work can grow with it (anyOf branches are all tried), so
// its validation runs under the timeout, on the handler's goroutine.
func (d *Dispatcher) run(ctx context.Context, tl *tool.Tool, s tool.Scope, args json.RawMessage) (tool.Result, error) {
	own := tl.Spec().Origin.Server == ""
	var call tool.Bound
	if own {
		var err error
		if call, err = d.bind(tl, args); err != nil {
			return tool.Result{}, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, tl.Spec().Timeout)
	defer cancel()
	type outcome struct {
		res tool.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				d.logPanic(tl, p)
				done <- outcome{err: errPanic}
			}
		}()
		c := call
		if !own {
			var err error
			if c, err = tl.Bind(args); err != nil {
				done <- outcome{err: err}
				return
			}
		}
		res, err := c.Run(ctx, s)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		return tool.Result{}, ctx.Err()
	}
}

var errPanic = errors.New("internal error")

// bind validates args for tl; a panic becomes errPanic, as in the handler.
func (d *Dispatcher) bind(tl *tool.Tool, args json.RawMessage) (call tool.Bound, err error) {
	defer func() {
		if p := recover(); p != nil {
			d.logPanic(tl, p)
			err = errPanic
		}
	}()
	return tl.Bind(args)
}

// logPanic logs a panic of tl's validation or handler with its stack.
func (d *Dispatcher) logPanic(tl *tool.Tool, p any) {
	d.cfg.Logger.Error("tool panicked", "tool", tl.Name(), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
}

// classify decides who hears about err: the caller (infrastructure) or the
// model (everything else).
func (d *Dispatcher) classify(ctx context.Context, tl *tool.Tool, err error) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, fmt.Errorf("dispatch %s: %w", tl.Name(), ctx.Err())
	}
	if tool.IsInfra(err) {
		return tool.Result{}, fmt.Errorf("dispatch %s: %w", tl.Name(), err)
	}
	var msg string
	var argErr *tool.ArgError
	switch {
	case errors.As(err, &argErr):
		msg = argErr.Error()
	case errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("%s timed out after %s.", tl.Name(), tl.Spec().Timeout)
	case errors.Is(err, errPanic):
		msg = fmt.Sprintf("%s failed with an internal error.", tl.Name())
	default:
		msg = "Error: " + err.Error()
	}
	d.cfg.Logger.Info("tool call failed", "tool", tl.Name(), "error", msg)
	return tool.Result{Content: msg, IsError: true}, nil
}
