package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestCallWithoutCommandLine: app.Call, driven with its options and no
// command line, runs in the caller's own conversation when it is given
// none ("cli-" and the user's id, owned by them), and returns a tool's
// error result, once printed, as ErrReported.
func TestCallWithoutCommandLine(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	var out bytes.Buffer
	env := app.Env{Stdout: &out, Now: func() time.Time { return fixedNow }, Getenv: func(string) string { return "" }}
	o := app.CallOptions{
		Turn: app.TurnInput{AgentFile: agentFile, Caller: app.Caller{User: "Ana Lima", Org: "Acme"}},
		Data: app.Data{Dir: data}, Tool: "calculate", Args: json.RawMessage(`{"expression":"2*3"}`),
	}
	if err := app.Call(ctx, o, env); err != nil || out.String() != "6\n" {
		t.Fatalf("calculate: %v, output %q", err, out.String())
	}
	st, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetConversation(ctx, "acme", "cli-ana-lima")
	st.Close()
	if err != nil || c.UserID != "ana-lima" {
		t.Fatalf("the caller's conversation: %+v, %v", c, err)
	}
	out.Reset()
	o.Tool, o.JSON = "web_search", true
	err = app.Call(ctx, o, env)
	var got app.CallOutput
	if jerr := json.Unmarshal(out.Bytes(), &got); !errors.Is(err, app.ErrReported) || jerr != nil || !got.IsError {
		t.Errorf("refused tool: %v, output %q; want ErrReported after the error result", err, out.String())
	}
}
