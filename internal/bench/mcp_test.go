package bench

import (
	"context"
	"testing"

	"github.com/quiverhq/quiver/internal/replicatest"
)

// BenchmarkMCPCall is comparison 2's calls under go test, for a profile
// of the client alone (-cpuprofile): the server runs as "quiver bench
// mcp-server", a process of its own, so every sample is the client's.
func BenchmarkMCPCall(b *testing.B) {
	ctx := context.Background()
	r := &runner{bin: replicatest.Binary(b), tmp: b.TempDir()}
	srv, m, err := startChild(ctx, "mcp server", r.bin, []string{"bench", "mcp-server"}, nil, listeningRe, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	endpoint := m[1] + "/mcp"
	sdk, err := newSDKClient(ctx, endpoint)
	if err != nil {
		b.Fatal(err)
	}
	defer sdk.close()
	q, err := r.newQuiverMCP(ctx, endpoint)
	if err != nil {
		b.Fatal(err)
	}
	defer q.close()
	for _, c := range []struct {
		name string
		c    mcpClient
	}{{"sdk", sdk}, {"quiver", q}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.c.call(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
