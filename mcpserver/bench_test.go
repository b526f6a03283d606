package mcpserver_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quiverhq/quiver/mcpserver"
)

// BenchmarkHTTPToolsCall measures tools/call throughput of the Streamable
// HTTP server under concurrent clients, each its own session: SDK client,
// loopback HTTP, guard, SDK server, dispatch and the calculate tool.
func BenchmarkHTTPToolsCall(b *testing.B) {
	f := newFixture(b)
	ts := f.httpServer(b, mcpserver.HTTPConfig{Token: "bench-token"})
	const parallelism = 4
	b.SetParallelism(parallelism)
	sessions := make(chan *mcp.ClientSession, parallelism*runtime.GOMAXPROCS(0))
	for range cap(sessions) {
		sessions <- httpClient(b, ts, "bench-token")
	}
	args := map[string]any{"expression": "(1200*1.05^3 - 50)/12"}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		cs := <-sessions
		for pb.Next() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "calculate", Arguments: args})
			if err != nil || res.IsError {
				b.Errorf("call: %v, %+v", err, res)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}
