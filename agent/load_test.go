package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/llm/openai"
	"github.com/quiverhq/quiver/turn"
)

// BenchmarkConcurrentConversations runs 1,000 conversations at once, each
// one turn with a tool call, against a zero-latency fake OpenAI server on
// loopback through the real adapter and SQLite. It reports turns per
// second, the p99 latency Quiver adds per turn (the fake model answers at
// once, so a turn's latency is all Quiver's), heap retained per idle
// conversation, and goroutines left after shutdown.
func BenchmarkConcurrentConversations(b *testing.B) {
	const conversations = 1000
	for range b.N {
		m := loadRound(b, conversations)
		b.ReportMetric(m.turnsPerSec, "turns/s")
		b.ReportMetric(float64(m.p99.Microseconds())/1000, "p99-ms")
		b.ReportMetric(m.idleBytes, "B/idle-conv")
		b.ReportMetric(float64(m.leaked), "goroutines-left")
	}
}

type loadMetrics struct {
	turnsPerSec float64
	p99         time.Duration
	idleBytes   float64
	leaked      int
}

func loadRound(b *testing.B, n int) loadMetrics {
	b.StopTimer()
	before := runtime.NumGoroutine()
	heapBefore := heap()
	t := &testing.T{}
	e := newEnv(t, agent.Config{})
	// Each conversation calls the calculator once, then answers.
	srv := llmtest.StartFunc(t, llmtest.OpenAI{}, func(req llm.Request) llmtest.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == llm.Tool {
			return llmtest.Reply{Text: []string{"42"}, Usage: llm.Usage{InputTokens: 100, OutputTokens: 2}}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "calculate", map[string]string{"expression": "6*7"})}}
	})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	model, err := openai.New(openai.Config{APIKey: "k", BaseURL: srv.URL, Model: "bench", Caps: turn.Capabilities{Tools: true}, HTTPClient: client})
	if err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			out, err := e.runner.Run(context.Background(), e.start(fmt.Sprintf("load-%d", i), "what is 6*7?", model), nil)
			lat[i] = time.Since(t0)
			if err != nil || out.Stop != agent.StopAnswer {
				b.Errorf("turn %d: %+v %v", i, out, err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	idle := (heap() - heapBefore) / float64(n)
	srv.Close()
	client.CloseIdleConnections()
	e.st.Close()
	slices.Sort(lat)
	return loadMetrics{
		turnsPerSec: float64(n) / elapsed.Seconds(),
		p99:         lat[n*99/100],
		idleBytes:   idle,
		leaked:      settleGoroutines(before),
	}
}

func heap() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc)
}

// settleGoroutines returns how many goroutines outlive the round, giving
// exiting ones a bounded number of scheduler turns to finish.
func settleGoroutines(before int) int {
	for range 1000 {
		if runtime.NumGoroutine() <= before {
			return 0
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	return runtime.NumGoroutine() - before
}
