package bench

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/internal/procstat"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// The pinned MCP call: the echo tool of "quiver bench mcp-server" with
// one short argument, and the answer both clients must get.
const (
	mcpServerName = "bench"
	mcpToolName   = "echo"
	mcpArgument   = "hi"
	mcpAnswer     = "echo: hi"
	mcpOrg        = "bench-org"
)

// MCPReport is comparison 2: one tool call at a time to the same MCP
// server, through Quiver's client path and through the go-sdk client
// directly.
type MCPReport struct {
	// SDK and Quiver are each client's figures.
	SDK    MCPStats `json:"sdk"`
	Quiver MCPStats `json:"quiver"`
	// P50Ratio, P99Ratio and CPURatio are Quiver's figure over the SDK's.
	P50Ratio float64 `json:"p50_ratio"`
	P99Ratio float64 `json:"p99_ratio"`
	CPURatio float64 `json:"client_cpu_ratio"`
}

// MCPStats is one client's calls.
type MCPStats struct {
	// Calls is how many calls were measured.
	Calls int `json:"calls"`
	// P50 and P99 are the time of one call, from its start to its
	// result, in µs.
	P50 float64 `json:"p50_us"`
	P99 float64 `json:"p99_us"`
	// ClientCPU is the CPU time of this process (the client; nothing else
	// runs in it meanwhile) per call, in µs.
	ClientCPU float64 `json:"client_cpu_us_per_call"`
	// ServerCPU is the CPU time of the server's process per call, in µs
	// (10 ms steps over the whole run).
	ServerCPU float64 `json:"server_cpu_us_per_call"`
}

// mcpClient makes the pinned call once; an answer other than mcpAnswer
// is an error.
type mcpClient interface {
	call(ctx context.Context) error
	close()
}

// runMCP is comparison 2: the server runs as a process of its own
// ("quiver bench mcp-server"), both clients in this one, taking turns in
// blocks so that both meet the same machine.
func (r *runner) runMCP(ctx context.Context) (*MCPReport, error) {
	srv, m, err := startChild(ctx, "mcp server", r.bin, []string{"bench", "mcp-server"}, nil, listeningRe, nil)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	endpoint := m[1] + "/mcp"
	sdk, err := newSDKClient(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	defer sdk.close()
	q, err := r.newQuiverMCP(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	defer q.close()
	// Short blocks, many of them: both clients meet the same moments of
	// a noisy machine.
	blocks, block := 40, 100*time.Millisecond
	if r.o.Short {
		blocks, block = 4, 25*time.Millisecond
	}
	r.logf("mcp: %d blocks of %s per client", blocks, block)
	st, err := alternate(ctx, blocks, block, srv.Pid(), []mcpClient{sdk, q})
	if err != nil {
		return nil, err
	}
	rep := &MCPReport{SDK: st[0], Quiver: st[1]}
	rep.P50Ratio = ratio(rep.Quiver.P50, rep.SDK.P50)
	rep.P99Ratio = ratio(rep.Quiver.P99, rep.SDK.P99)
	rep.CPURatio = ratio(rep.Quiver.ClientCPU, rep.SDK.ClientCPU)
	return rep, nil
}

// alternate warms each client up, then runs blocks rounds in which each
// client in turn calls for the length of one block, one call at a time,
// and returns each client's figures. CPU is read at every block's ends.
func alternate(ctx context.Context, blocks int, block time.Duration, serverPid int, clients []mcpClient) ([]MCPStats, error) {
	lat := make([][]time.Duration, len(clients))
	client := make([]time.Duration, len(clients))
	server := make([]time.Duration, len(clients))
	for _, c := range clients {
		for range 20 {
			if err := c.call(ctx); err != nil {
				return nil, fmt.Errorf("warm-up call: %w", err)
			}
		}
	}
	for range blocks {
		for i, c := range clients {
			s0, err := procstat.ProcessCPU(serverPid)
			if err != nil {
				return nil, err
			}
			c0 := procstat.SelfCPU()
			for end := time.Now().Add(block); time.Now().Before(end); {
				start := time.Now()
				if err := c.call(ctx); err != nil {
					return nil, err
				}
				lat[i] = append(lat[i], time.Since(start))
			}
			client[i] += procstat.SelfCPU() - c0
			s1, err := procstat.ProcessCPU(serverPid)
			if err != nil {
				return nil, err
			}
			server[i] += s1 - s0
		}
	}
	out := make([]MCPStats, len(clients))
	for i := range clients {
		n := len(lat[i])
		out[i] = MCPStats{Calls: n, P50: us(percentile(lat[i], 0.50)), P99: us(percentile(lat[i], 0.99)),
			ClientCPU: us(client[i]) / float64(n), ServerCPU: us(server[i]) / float64(n)}
	}
	return out, nil
}

// sdkClient is the go-sdk client on a session of its own: the least a
// Go program calling the server can do.
type sdkClient struct {
	session *mcp.ClientSession
	params  *mcp.CallToolParams
}

func newSDKClient(ctx context.Context, endpoint string) (*sdkClient, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-sdk", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		return nil, fmt.Errorf("sdk client: connect: %w", err)
	}
	return &sdkClient{session: s, params: &mcp.CallToolParams{Name: mcpToolName, Arguments: map[string]any{"text": mcpArgument}}}, nil
}

func (c *sdkClient) call(ctx context.Context) error {
	res, err := c.session.CallTool(ctx, c.params)
	if err != nil {
		return fmt.Errorf("sdk client: %w", err)
	}
	if t, ok := firstText(res); res.IsError || !ok || t != mcpAnswer {
		return fmt.Errorf("sdk client: answer %q (error %v), want %q", t, res.IsError, mcpAnswer)
	}
	return nil
}

func (c *sdkClient) close() { _ = c.session.Close() }

// firstText is the text of res's first content block.
func firstText(res *mcp.CallToolResult) (string, bool) {
	if len(res.Content) == 0 {
		return "", false
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", false
	}
	return t.Text, true
}

// quiverMCP is a tool call as a turn makes it: the server registered
// for an organisation (stored in SQLite, connection-tested), the turn's
// toolset built from the registrations and the pool and selected for an
// agent allowing the tool, and each call run by dispatch (the
// registration re-check, argument validation, the guarded origin-bound
// HTTP client, result rendering and the result store's threshold).
type quiverMCP struct {
	st   *sqlite.Store
	pool *mcpclient.Pool
	regs *mcpclient.Registrations
	d    *dispatch.Dispatcher
	turn dispatch.Turn
	args dispatch.Call
}

func (r *runner) newQuiverMCP(ctx context.Context, endpoint string) (*quiverMCP, error) {
	dir, err := os.MkdirTemp(r.tmp, "mcp-*")
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("quiver client: %w", err)
	}
	key := make([]byte, secret.KeySize)
	rand.Read(key)
	kr, err := secret.New(secret.Key{ID: "k1", Secret: key})
	if err != nil {
		st.Close()
		return nil, err
	}
	quiet := slog.New(slog.DiscardHandler)
	// Self-hosted: the mode in which loopback servers are reachable.
	mode := netguard.SelfHosted
	q := &quiverMCP{st: st, pool: mcpclient.NewPool(mcpclient.PoolConfig{Network: netguard.Config{Mode: mode}, Version: "bench", Logger: quiet})}
	q.regs = mcpclient.NewRegistrations(mcpclient.RegistrationsConfig{Store: st, Keyring: kr, Pool: q.pool, Logger: quiet})
	if err := q.prepare(ctx, endpoint, mode); err != nil {
		q.close()
		return nil, fmt.Errorf("quiver client: %w", err)
	}
	q.d = dispatch.New(dispatch.Config{Results: st, Logger: quiet})
	return q, nil
}

// prepare registers the server and builds the turn the calls run in.
func (q *quiverMCP) prepare(ctx context.Context, endpoint string, mode netguard.Mode) error {
	if _, err := q.regs.Add(ctx, mcpOrg, mode, mcpclient.Registration{Name: mcpServerName, URL: endpoint}); err != nil {
		return fmt.Errorf("register the server: %w", err)
	}
	base := registry.New()
	ts, err := mcpclient.NewToolset(ctx, q.regs, q.pool, mcpOrg, mode, base)
	if err != nil {
		return err
	}
	facts := turn.Facts{
		Model: turn.Model{Provider: "openai", Name: "gpt-4.1-mini", Caps: turn.Capabilities{Tools: true}},
		Agent: turn.Agent{Allow: []string{mcpServerName + "/" + mcpToolName}},
	}
	sel := base.With(ts.Overlay).Select(facts)
	name := mcpclient.WireName(mcpServerName, mcpToolName)
	if _, ok := sel.Lookup(name); !ok {
		return fmt.Errorf("%s is not in the turn's toolset %v", name, sel.Names())
	}
	args, err := json.Marshal(map[string]string{"text": mcpArgument})
	if err != nil {
		return err
	}
	q.turn = dispatch.Turn{Toolset: sel, Scope: tool.Scope{OrgID: mcpOrg, UserID: "bench-user", ConversationID: "bench-conv", TurnID: "bench-turn"}}
	q.args = dispatch.Call{ID: "call-1", Name: name, Args: args}
	return nil
}

func (q *quiverMCP) call(ctx context.Context) error {
	res, err := q.d.Call(ctx, q.turn, q.args)
	if err != nil {
		return fmt.Errorf("quiver client: %w", err)
	}
	if res.IsError || res.Content != mcpAnswer {
		return fmt.Errorf("quiver client: answer %q (error %v), want %q", res.Content, res.IsError, mcpAnswer)
	}
	return nil
}

func (q *quiverMCP) close() {
	q.pool.Close()
	q.regs.Close()
	q.st.Close()
}

// echoIn is the echo tool's argument.
type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// ServeMCPServer is "quiver bench mcp-server": a go-sdk MCP server with
// one tool, echo (it answers "echo: " and its text argument), over
// Streamable HTTP on a new loopback port, printed on stderr, until ctx
// ends.
func ServeMCPServer(ctx context.Context, stderr io.Writer) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "quiver-bench", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: mcpToolName, Description: "Echoes its text."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: mcpToolName + ": " + in.Text}}}, nil, nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("mcp server: %w", err)
	}
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil), ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	fmt.Fprintf(stderr, "quiver bench mcp-server: listening http://%s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("mcp server: %w", err)
	}
	return nil
}

// us is d in microseconds.
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// ratio is a over b (0 when b is).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
