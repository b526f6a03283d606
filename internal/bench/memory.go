package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
)

// probeRe is the probe's start-up line.
var probeRe = regexp.MustCompile(`quiver bench serve-probe: listening (http://\S+)`)

// RuntimeFigures are a process's live heap and goroutines.
type RuntimeFigures struct {
	// HeapLive is the heap the last collection found live, in bytes.
	HeapLive uint64 `json:"heap_live_bytes"`
	// Goroutines is how many goroutines exist.
	Goroutines int `json:"goroutines"`
	// Stacks counts the goroutines by stackKey: the function each waits
	// in and the one that started it.
	Stacks map[string]int `json:"goroutines_by_stack,omitempty"`
}

// readRuntime collects garbage twice (the second pass frees what the
// first one's finalizers let go) and reads the figures.
func readRuntime() RuntimeFigures {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	f := RuntimeFigures{Goroutines: runtime.NumGoroutine(), Stacks: stackKinds(allStacks())}
	if s[0].Value.Kind() == metrics.KindUint64 {
		f.HeapLive = s[0].Value.Uint64()
	}
	return f
}

// allStacks is runtime.Stack of every goroutine, whole.
func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// stackKinds counts the goroutines of a runtime.Stack dump by stackKey.
func stackKinds(dump []byte) map[string]int {
	kinds := make(map[string]int)
	for g := range strings.SplitSeq(string(dump), "\n\n") {
		if k := stackKey(g); k != "" {
			kinds[k]++
		}
	}
	return kinds
}

// stackKey names one goroutine of a dump ("goroutine 7 [select]:", then
// a function and file line per frame, then "created by F in goroutine
// N"): its innermost function, and "<- F" for the one that started it.
// Goroutines waiting in the same place for the same reason have the
// same key, whatever their arguments.
func stackKey(g string) string {
	lines := strings.Split(strings.TrimSpace(g), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "goroutine ") {
		return ""
	}
	key := funcOf(lines[1])
	for _, l := range lines[2:] {
		if c, ok := strings.CutPrefix(l, "created by "); ok {
			c, _, _ = strings.Cut(c, " in goroutine ")
			key += " <- " + c
		}
	}
	return key
}

// funcOf is a dump's frame line without its arguments.
func funcOf(frame string) string {
	if i := strings.LastIndexByte(frame, '('); i > 0 {
		return frame[:i]
	}
	return frame
}

// stacksLeft is the kinds of goroutine after has more of than before,
// and how many more; nil when there are none.
func stacksLeft(before, after map[string]int) map[string]int {
	var left map[string]int
	for k, n := range after {
		if d := n - before[k]; d > 0 {
			if left == nil {
				left = make(map[string]int)
			}
			left[k] = d
		}
	}
	return left
}

// ServeProbe is "quiver bench serve-probe": it runs serve (quiver serve,
// in this process) with a second listener on loopback, printed on
// stderr, whose GET /runtime answers RuntimeFigures after a collection.
// Only quiver bench starts it; quiver serve itself has no such endpoint.
func ServeProbe(ctx context.Context, stderr io.Writer, serve func(ctx context.Context) error) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("serve-probe: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /runtime", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(readRuntime())
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Fprintf(stderr, "quiver bench serve-probe: listening http://%s\n", ln.Addr())
	return serve(ctx)
}

// MemoryReport is comparison 5: the heap an idle conversation holds
// and the goroutines a burst leaves, in the server.
type MemoryReport struct {
	// Conversations is how many conversations each had one turn; Burst
	// how many of those turns ran at once.
	Conversations int `json:"conversations"`
	Burst         int `json:"burst"`
	// Before and After are the server's figures before the
	// conversations were made and after their turns ended, idle
	// connections closed.
	Before RuntimeFigures `json:"before"`
	After  RuntimeFigures `json:"after"`
	// PerConversation is the live heap added per conversation, bytes.
	PerConversation float64 `json:"heap_bytes_per_idle_conversation"`
	// GoroutinesLeft is After's goroutines less Before's; Left names
	// them: how many more of each kind of goroutine (stackKey) After
	// holds than Before.
	GoroutinesLeft int            `json:"goroutines_left"`
	Left           map[string]int `json:"goroutines_left_by_stack,omitempty"`
}

// runMemory is comparison 5.
func (r *runner) runMemory(ctx context.Context) (*MemoryReport, error) {
	rep := &MemoryReport{Conversations: 1000, Burst: 200}
	if r.o.Short {
		rep.Conversations, rep.Burst = 100, 20
	}
	model, modelURL, err := startModel(ctx, r.bin)
	if err != nil {
		return nil, err
	}
	defer model.Close()
	dir, err := os.MkdirTemp(r.tmp, "memory-*")
	if err != nil {
		return nil, err
	}
	q, err := startQuiver(ctx, r.bin, dir, []string{"bench", "serve-probe"}, modelURL, "", r.http)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	m := probeRe.FindStringSubmatch(q.server.Log())
	if m == nil {
		return nil, fmt.Errorf("the probe printed no address:\n%s", q.server.Log())
	}
	probe := m[1]
	warm, err := q.conversations(ctx, warmTurns)
	if err != nil {
		return nil, err
	}
	for _, c := range warm {
		if err := c.turn(ctx, Message); err != nil {
			return nil, fmt.Errorf("warm-up turn: %w", err)
		}
	}
	if rep.Before, err = r.settled(ctx, probe, modelURL); err != nil {
		return nil, err
	}
	r.logf("memory: %d conversations, %d turns at once", rep.Conversations, rep.Burst)
	convs, err := q.conversations(ctx, rep.Conversations)
	if err != nil {
		return nil, err
	}
	if err := burst(ctx, convs, rep.Burst); err != nil {
		return nil, err
	}
	if rep.After, err = r.settled(ctx, probe, modelURL); err != nil {
		return nil, err
	}
	rep.PerConversation = (float64(rep.After.HeapLive) - float64(rep.Before.HeapLive)) / float64(rep.Conversations)
	rep.GoroutinesLeft = rep.After.Goroutines - rep.Before.Goroutines
	rep.Left = stacksLeft(rep.Before.Stacks, rep.After.Stacks)
	return rep, nil
}

// burst runs one turn in each conversation, at most width at once.
func burst(ctx context.Context, convs []convo, width int) error {
	sem := make(chan struct{}, width)
	errs := make(chan error, len(convs))
	var wg sync.WaitGroup
	for _, c := range convs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := c.turn(ctx, Message); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("burst: %d turns failed, the first: %w", len(errs)+1, err)
	}
	return nil
}

// settled closes the idle connections into the server (this client's)
// and out of it (the fake model's end), then reads the probe until the
// goroutine count holds for three reads in a row (at most 5 s).
func (r *runner) settled(ctx context.Context, probe, modelURL string) (RuntimeFigures, error) {
	r.http.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, modelURL+"/bench/close-idle", nil)
	if err != nil {
		return RuntimeFigures{}, err
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return RuntimeFigures{}, err
	}
	resp.Body.Close()
	r.http.CloseIdleConnections()
	var last RuntimeFigures
	same := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && same < 3; {
		time.Sleep(100 * time.Millisecond) // the connections' goroutines end on their own
		body, err := r.get(ctx, probe+"/runtime")
		if err != nil {
			return RuntimeFigures{}, err
		}
		r.http.CloseIdleConnections()
		var f RuntimeFigures
		if err := json.Unmarshal(body, &f); err != nil {
			return RuntimeFigures{}, err
		}
		if f.Goroutines == last.Goroutines {
			same++
		} else {
			same = 0
		}
		last = f
	}
	return last, nil
}
