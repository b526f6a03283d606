package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// BenchmarkLoopStep measures the loop's own cost per step: a zero-latency
// scripted model whose every step makes three tool calls (two reads and a
// write), with SQLite persistence of every message, result and usage record.
func BenchmarkLoopStep(b *testing.B) {
	t := &testing.T{}
	e := newEnv(t, agent.Config{MaxSteps: 1 << 30})
	e.t = t
	step := func(i int) llmtest.Reply {
		return llmtest.Reply{Text: []string{"step"}, ToolCalls: []llm.ToolCall{
			llmtest.Call(fmt.Sprintf("a%d", i), "calculate", map[string]string{"expression": "2*21"}),
			llmtest.Call(fmt.Sprintf("b%d", i), "lookup", map[string]string{"text": "k"}),
			llmtest.Call(fmt.Sprintf("c%d", i), "note", map[string]string{"text": "n"}),
		}, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}
	}
	m := llmtest.NewModel()
	for i := range b.N {
		m.Push(step(i))
	}
	m.Push(llmtest.Reply{Text: []string{"done"}})
	b.ResetTimer()
	out, _ := e.run(context.Background(), fmt.Sprintf("bench-%d", b.N), "go", m)
	b.StopTimer()
	if out.Stop != agent.StopAnswer {
		b.Fatalf("outcome %+v", out)
	}
}
