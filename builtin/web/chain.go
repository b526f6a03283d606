package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults for ChainOptions' zero values.
const (
	DefaultTimeout  = 5 * time.Second
	DefaultCooldown = 60 * time.Second
	// MaxCooldown caps how long an engine's own wait (Retry-After, or
	// Brave's rate-limit reset) can bench it.
	MaxCooldown = time.Hour
)

// ErrUnavailable is returned, wrapped with each engine's failure, when no
// engine could answer.
var ErrUnavailable = errors.New("web search is unavailable right now")

// ChainOptions tunes a Chain. Every zero value means the default stated.
type ChainOptions struct {
	// Timeout bounds one engine's attempt; zero means DefaultTimeout.
	Timeout time.Duration
	// Cooldown is how long a failing engine is skipped when it asked for
	// no wait of its own (Retry-After, Brave's X-RateLimit-Reset); zero
	// means DefaultCooldown.
	Cooldown time.Duration
	// Now is the clock for cooldowns; nil means clock.Now.
	Now func() time.Time
	// Logger receives one record per engine failure; nil means none.
	Logger *slog.Logger
}

// Chain tries its engines in order and returns the first non-empty answer.
// It is safe for concurrent use; cooldowns are shared by all callers of
// this process (per replica, harmless: another replica only tries a
// cooling engine again sooner).
type Chain struct {
	engines  []Engine
	timeout  time.Duration
	cooldown time.Duration
	now      func() time.Time
	log      *slog.Logger

	mu    sync.Mutex
	until map[string]time.Time
}

// NewChain returns a chain over engines, tried in the order given.
func NewChain(engines []Engine, o ChainOptions) *Chain {
	c := &Chain{engines: slices.Clone(engines), timeout: o.Timeout, cooldown: o.Cooldown,
		now: orNow(o.Now), log: o.Logger, until: map[string]time.Time{}}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.cooldown <= 0 {
		c.cooldown = DefaultCooldown
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Failure is why one engine did not serve a query.
type Failure struct {
	Engine string
	Kind   Kind
}

// Outcome is a chain's answer: the engine that served it ("" when every
// engine was empty), its normalised results and the engines passed over.
type Outcome struct {
	Engine   string
	Results  []Result
	Failures []Failure
}

// Trailer is the short line the model reads about the chain
// ("brave: rate limited; used duckduckgo"). It names engines and failure
// kinds only, never URLs, keys or raw errors.
func (o Outcome) Trailer() string {
	parts := make([]string, 0, len(o.Failures)+1)
	for _, f := range o.Failures {
		parts = append(parts, f.Engine+": "+f.Kind.String())
	}
	if o.Engine != "" {
		parts = append(parts, "used "+o.Engine)
	}
	return strings.Join(parts, "; ")
}

// Search runs q through the chain. Count is clamped to 1–MaxCount (zero
// means DefaultCount) and an empty category means text. Engines that do not
// serve the category are passed over silently; engines cooling down or
// failing their probe are passed over with a Failure. The first engine
// with results wins. When every engine tried was empty or failed, with at
// least one empty, the Outcome has no results and a nil error; when all
// failed the error wraps ErrUnavailable. A category no engine serves is an
// error, and a cancelled ctx returns ctx.Err().
func (c *Chain) Search(ctx context.Context, q Query) (Outcome, error) {
	q.Count = clampCount(q.Count)
	q.Category = category(q)
	var out Outcome
	served, empty := false, false
	for _, e := range c.engines {
		if !slices.Contains(e.Categories(), q.Category) {
			continue
		}
		served = true
		res, kind, err := c.try(ctx, e, q)
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		if err == nil {
			out.Engine, out.Results = e.Name(), res
			return out, nil
		}
		empty = empty || kind == Empty
		out.Failures = append(out.Failures, Failure{Engine: e.Name(), Kind: kind})
	}
	switch {
	case !served:
		return Outcome{}, fmt.Errorf("web search: no engine serves category %q", q.Category)
	case empty:
		return out, nil
	}
	return out, fmt.Errorf("%w (%s)", ErrUnavailable, out.Trailer())
}

// try runs one engine under the per-engine timeout and returns its
// normalised results, or the kind of its failure. Failures other than an
// empty answer start the engine's cooldown.
func (c *Chain) try(ctx context.Context, e Engine, q Query) ([]Result, Kind, error) {
	name := e.Name()
	if c.coolingDown(name) {
		return nil, CoolingDown, errSkipped
	}
	if p, ok := e.(Prober); ok && !p.Available(ctx) {
		return nil, Unavailable, errSkipped
	}
	ectx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := e.Search(ectx, q)
	if err == nil {
		if res = normalise(res, q.Count); len(res) > 0 {
			return res, 0, nil
		}
		return nil, Empty, errEmpty
	}
	kind, wait := kindOf(err)
	if ectx.Err() != nil && ctx.Err() == nil {
		kind = TimedOut
	}
	if ctx.Err() != nil {
		return nil, Failed, err
	}
	c.log.LogAttrs(ctx, slog.LevelWarn, "web search engine failed",
		slog.String("engine", name), slog.String("kind", kind.String()), slog.String("err", err.Error()))
	if kind != Empty {
		c.benchFor(name, wait)
	}
	return nil, kind, err
}

var (
	errSkipped = errors.New("skipped")
	errEmpty   = errors.New("no results")
)

func (c *Chain) coolingDown(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now().Before(c.until[name])
}

// benchFor starts name's cooldown: the wait the engine asked for when it
// gave one (capped at MaxCooldown), else the chain's cooldown.
func (c *Chain) benchFor(name string, retryAfter time.Duration) {
	d := c.cooldown
	if retryAfter > 0 {
		d = min(retryAfter, MaxCooldown)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.until[name] = c.now().Add(d)
}

// Categories returns the categories some engine can serve now: engines
// cooling down or failing their (cached) probe are left out. Text is always
// listed, since it is what the tool is for; the order is AllCategories'.
func (c *Chain) Categories(ctx context.Context) []string {
	return c.categories(func(e Engine) bool {
		if c.coolingDown(e.Name()) {
			return false
		}
		p, ok := e.(Prober)
		return !ok || p.Available(ctx)
	})
}

// Configured returns the categories the configured engines serve, without
// probing or cooldowns: the tool's default enum.
func (c *Chain) Configured() []string {
	return c.categories(func(Engine) bool { return true })
}

func (c *Chain) categories(usable func(Engine) bool) []string {
	have := map[string]bool{Text: true}
	for _, e := range c.engines {
		if usable(e) {
			for _, cat := range e.Categories() {
				have[cat] = true
			}
		}
	}
	var out []string
	for _, cat := range allCategories {
		if have[cat] {
			out = append(out, cat)
		}
	}
	return out
}

// Engines returns the names of the chain's engines in order.
func (c *Chain) Engines() []string {
	names := make([]string, len(c.engines))
	for i, e := range c.engines {
		names[i] = e.Name()
	}
	return names
}
