package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Message is the pinned user message of every measured turn.
const Message = "What is 6 * 7? Use the calculator, then answer in one sentence."

// warmTurns are sent to each server before anything is measured: the
// first turns fill caches and connection pools.
const warmTurns = 20

// sustainedP99 is the latency past which a rate does not count as
// sustained, in ms.
const sustainedP99 = 1000

// TurnReport is comparison 1 on one store.
type TurnReport struct {
	// Store is what quiver serve's start-up line named.
	Store string `json:"store"`
	// Workload is the pinned workload as the fake model saw it.
	Workload Workload `json:"workload"`
	// Levels are the fixed offered loads, each run on Quiver then on the
	// baseline.
	Levels []Level `json:"levels"`
	// CPU is the CPU per turn at the level nearest 200 turns/s.
	CPU CPUFigure `json:"cpu"`
	// MaxSustained is the highest offered rate Quiver served with no
	// error and p99 under 1 s (0 when none of the steps did), and Steps
	// every rate tried.
	MaxSustained float64     `json:"max_sustained_per_s"`
	Steps        []LoadStats `json:"sustained_steps"`
}

// Workload is the first model request of a pinned turn.
type Workload struct {
	RequestBytes int `json:"request_bytes"`
	SystemChars  int `json:"system_chars"`
	Tools        int `json:"tools_declared"`
	ToolChunks   int `json:"tool_reply_chunks"`
	TextChunks   int `json:"text_reply_chunks"`
	MessageChars int `json:"message_chars"`
}

// Level is one offered load on both servers.
type Level struct {
	Quiver   LoadStats `json:"quiver"`
	Baseline LoadStats `json:"baseline"`
	// AddedP50 and AddedP99 are Quiver's latency minus the baseline's.
	AddedP50 float64 `json:"added_p50_ms"`
	AddedP99 float64 `json:"added_p99_ms"`
}

// CPUFigure is server CPU per turn, Quiver's against the baseline's.
type CPUFigure struct {
	Offered  float64 `json:"offered_per_s"`
	Quiver   float64 `json:"quiver_ms_per_turn"`
	Baseline float64 `json:"baseline_ms_per_turn"`
	Ratio    float64 `json:"ratio"`
}

// runTurns is comparison 1 on the store dbURL names (SQLite when "").
func (r *runner) runTurns(ctx context.Context, dbURL string) (*TurnReport, error) {
	dir, err := os.MkdirTemp(r.tmp, "turns-*")
	if err != nil {
		return nil, err
	}
	model, modelURL, err := startModel(ctx, r.bin)
	if err != nil {
		return nil, err
	}
	defer model.Close()
	q, err := startQuiver(ctx, r.bin, dir, []string{"serve"}, modelURL, dbURL, r.http)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	rep := &TurnReport{Store: q.Store}
	r.logf("turns: %s: warming up", q.Store)
	warm, err := q.conversations(ctx, warmTurns)
	if err != nil {
		return nil, err
	}
	for _, c := range warm {
		if err := c.turn(ctx, Message); err != nil {
			return nil, fmt.Errorf("warm-up turn: %w", err)
		}
	}
	first, err := r.get(ctx, modelURL+"/bench/first-request")
	if err != nil {
		return nil, fmt.Errorf("the fake model's first request: %w", err)
	}
	rep.Workload, err = workloadOf(first)
	if err != nil {
		return nil, err
	}
	base, baseURL, err := r.startBaseline(ctx, dir, modelURL, first)
	if err != nil {
		return nil, err
	}
	defer base.Close()
	for range warmTurns {
		if err := r.baselineTurn(ctx, baseURL); err != nil {
			return nil, fmt.Errorf("baseline warm-up turn: %w", err)
		}
	}
	for _, rate := range r.o.Rates {
		lv, err := r.level(ctx, q, base, baseURL, rate)
		if err != nil {
			return nil, err
		}
		rep.Levels = append(rep.Levels, lv)
	}
	rep.CPU = cpuFigure(rep.Levels)
	if rep.MaxSustained, rep.Steps, err = r.sustained(ctx, q); err != nil {
		return nil, err
	}
	return rep, nil
}

// level runs one offered load on Quiver, then on the baseline.
func (r *runner) level(ctx context.Context, q *deployment, base *child, baseURL string, rate float64) (Level, error) {
	n := max(1, int(rate*r.o.Duration.Seconds()))
	convs, err := q.conversations(ctx, n)
	if err != nil {
		return Level{}, err
	}
	r.logf("turns: %.0f/s: %d turns on quiver", rate, n)
	lv := Level{Quiver: openLoop(ctx, rate, n, q.server.Pid(), func(ctx context.Context, i int) error {
		return convs[i].turn(ctx, Message)
	})}
	r.logf("turns: %.0f/s: %d turns on the baseline", rate, n)
	lv.Baseline = openLoop(ctx, rate, n, base.Pid(), func(ctx context.Context, _ int) error {
		return r.baselineTurn(ctx, baseURL)
	})
	lv.AddedP50 = lv.Quiver.P50 - lv.Baseline.P50
	lv.AddedP99 = lv.Quiver.P99 - lv.Baseline.P99
	return lv, nil
}

// sustained steps the offered rate up by half each time from the first
// fixed rate, until a step has an error or p99 over sustainedP99, or the
// rate passes MaxRate; it returns the last rate that held.
func (r *runner) sustained(ctx context.Context, q *deployment) (float64, []LoadStats, error) {
	var steps []LoadStats
	best := 0.0
	for rate := r.o.Rates[0]; rate <= r.o.MaxRate; rate = math.Round(rate * 1.5) {
		n := max(1, int(rate*r.o.Duration.Seconds()))
		convs, err := q.conversations(ctx, n)
		if err != nil {
			return 0, nil, err
		}
		r.logf("turns: sustained? %.0f/s, %d turns", rate, n)
		st := openLoop(ctx, rate, n, q.server.Pid(), func(ctx context.Context, i int) error {
			return convs[i].turn(ctx, Message)
		})
		steps = append(steps, st)
		if st.Errors > 0 || st.P99 > sustainedP99 {
			break
		}
		best = rate
	}
	return best, steps, nil
}

// cpuFigure is the CPU per turn at the level nearest 200 turns/s.
func cpuFigure(levels []Level) CPUFigure {
	var best *Level
	for i := range levels {
		if best == nil || math.Abs(levels[i].Quiver.Offered-200) < math.Abs(best.Quiver.Offered-200) {
			best = &levels[i]
		}
	}
	if best == nil {
		return CPUFigure{}
	}
	f := CPUFigure{Offered: best.Quiver.Offered, Quiver: best.Quiver.CPUPerTurn, Baseline: best.Baseline.CPUPerTurn}
	if f.Baseline > 0 {
		f.Ratio = f.Quiver / f.Baseline
	}
	return f
}

// workloadOf describes the first model request of a turn.
func workloadOf(first []byte) (Workload, error) {
	var wire struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(first, &wire); err != nil {
		return Workload{}, fmt.Errorf("the first model request: %w", err)
	}
	w := Workload{RequestBytes: len(first), Tools: len(wire.Tools), ToolChunks: len(renderToolReply()), TextChunks: len(renderTextReply()), MessageChars: len(Message)}
	for _, m := range wire.Messages {
		if m.Role == "system" || m.Role == "developer" {
			w.SystemChars += len([]rune(m.Content))
		}
	}
	return w, nil
}

// startBaseline starts "quiver bench baseline" replaying first.
func (r *runner) startBaseline(ctx context.Context, dir, modelURL string, first []byte) (*child, string, error) {
	file := filepath.Join(dir, "first-request.json")
	if err := os.WriteFile(file, first, 0o600); err != nil {
		return nil, "", err
	}
	c, m, err := startChild(ctx, "baseline", r.bin, []string{"bench", "baseline", "--model", modelURL, "--request", file}, nil, listeningRe, nil)
	if err != nil {
		return nil, "", err
	}
	return c, m[1], nil
}

// baselineTurn sends the pinned message to the baseline and reads its
// stream to the done event.
func (r *runner) baselineTurn(ctx context.Context, baseURL string) error {
	body, _ := json.Marshal(map[string]string{"message": Message})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/turn", strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if err := pinnedTurn(r.http, req); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	return nil
}
