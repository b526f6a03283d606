package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// results is an in-memory store.Results.
type results struct {
	mu   sync.Mutex
	m    map[string]store.Result
	fail error
	// quota is the last put's; a body over it is refused as a store does.
	quota store.ResultQuota
}

func (r *results) PutResult(_ context.Context, res store.Result, q store.ResultQuota) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.quota = q
	if r.fail != nil {
		return r.fail
	}
	if err := store.CheckQuota(res, q); err != nil {
		return err
	}
	if r.m == nil {
		r.m = map[string]store.Result{}
	}
	r.m[res.Ref] = res
	return nil
}

func (r *results) GetResult(_ context.Context, org, conv, ref string) (store.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.m[ref]
	if !ok || res.OrgID != org || res.ConversationID != conv {
		return store.Result{}, store.ErrNotFound
	}
	return res, nil
}

type args struct {
	Mode string `json:"mode"`
	N    int    `json:"n,omitempty"`
}

// behave is a tool whose behaviour the arguments choose.
func behave(block chan struct{}) *tool.Tool {
	return tool.New(tool.Spec{Name: "behave", Description: "Test tool.", AlwaysOn: true, Timeout: time.Hour},
		func(ctx context.Context, s tool.Scope, a args) (string, error) {
			switch a.Mode {
			case "scope":
				return fmt.Sprintf("%s/%s/%s/%s", s.OrgID, s.UserID, s.ConversationID, s.TurnID), nil
			case "error":
				return "", errors.New("file not found")
			case "infra":
				return "", tool.Infra(errors.New("store down"))
			case "panic":
				panic("boom")
			case "big":
				return strings.Repeat("é", a.N), nil
			case "block":
				<-block
				return "late", nil
			}
			return "ok", nil
		})
}

func setup(t *testing.T, cfg dispatch.Config, extra ...*tool.Tool) (*dispatch.Dispatcher, dispatch.Turn, *results) {
	t.Helper()
	rs := &results{}
	if cfg.Results == nil {
		cfg.Results = rs
	}
	if cfg.IDs == nil {
		cfg.IDs = &ids.Sequence{}
	}
	c := registry.New()
	c.Register(behave(nil))
	c.Register(extra...)
	c.Register(tool.New(tool.Spec{Name: "secret_tool", Description: "Not allowed."}, func(context.Context, tool.Scope, struct{}) (string, error) { return "x", nil }))
	ts := c.Select(turn.Facts{Model: turn.Model{Caps: turn.Capabilities{Tools: true}}, Agent: turn.Agent{Allow: []string{"slow"}}})
	tn := dispatch.Turn{Toolset: ts, Scope: tool.Scope{OrgID: "o1", UserID: "u1", ConversationID: "c1", TurnID: "t1"}}
	return dispatch.New(cfg), tn, rs
}

func TestCall(t *testing.T) {
	d, tn, _ := setup(t, dispatch.Config{})
	tests := []struct {
		name string
		call dispatch.Call
		want tool.Result
	}{
		{"ok", dispatch.Call{Name: "behave", Args: []byte(`{"mode":"ok"}`)}, tool.Result{Content: "ok"}},
		{"scope comes from the turn", dispatch.Call{Name: "behave", Args: []byte(`{"mode":"scope"}`)}, tool.Result{Content: "o1/u1/c1/t1"}},
		{"scope cannot come from arguments", dispatch.Call{Name: "behave", Args: []byte(`{"mode":"scope","org":"o2"}`)},
			tool.Result{IsError: true, Content: `invalid arguments for behave: field "org": unknown field; fields are mode, n`}},
		{"unknown tool", dispatch.Call{Name: "nope", Args: []byte(`{}`)}, tool.Result{IsError: true, Content: `Tool "nope" is not available.`}},
		{"registered but not selected", dispatch.Call{Name: "secret_tool"}, tool.Result{IsError: true, Content: `Tool "secret_tool" is not available.`}},
		{"refusal strips control characters", dispatch.Call{Name: "a\nb"}, tool.Result{IsError: true, Content: `Tool "ab" is not available.`}},
		{"missing field", dispatch.Call{Name: "behave", Args: []byte(`{}`)}, tool.Result{IsError: true, Content: `invalid arguments for behave: field "mode": required field missing`}},
		{"handler error goes to the model", dispatch.Call{Name: "behave", Args: []byte(`{"mode":"error"}`)}, tool.Result{IsError: true, Content: "Error: file not found"}},
		{"panic becomes an error result", dispatch.Call{Name: "behave", Args: []byte(`{"mode":"panic"}`)}, tool.Result{IsError: true, Content: "behave failed with an internal error."}},
		{"small result inline", dispatch.Call{Name: "behave", Args: []byte(`{"mode":"big","n":8000}`)}, tool.Result{Content: strings.Repeat("é", 8000)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.Call(context.Background(), tn, tc.call)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRefusalRevealsNothing(t *testing.T) {
	d, tn, _ := setup(t, dispatch.Config{})
	got, err := d.Call(context.Background(), tn, dispatch.Call{Name: "behav"})
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"behave", "secret_tool", "allow", "available:"} {
		if strings.Contains(got.Content, leak) {
			t.Errorf("refusal %q reveals %q", got.Content, leak)
		}
	}
}

func TestInfrastructureFailuresReturnToCaller(t *testing.T) {
	d, tn, _ := setup(t, dispatch.Config{})
	if _, err := d.Call(context.Background(), tn, dispatch.Call{Name: "behave", Args: []byte(`{"mode":"infra"}`)}); err == nil || !strings.Contains(err.Error(), "store down") {
		t.Errorf("infra error = %v, want it returned", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Call(ctx, tn, dispatch.Call{Name: "behave", Args: []byte(`{"mode":"ok"}`)}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled turn: err = %v, want context.Canceled", err)
	}
}

// TestCancelledTurnRunsNothing: a call on a turn whose context has ended
// returns the cancellation and never starts the handler (a write tool must
// not run after the turn was stopped).
func TestCancelledTurnRunsNothing(t *testing.T) {
	ran := make(chan struct{}, 1)
	write := tool.New(tool.Spec{Name: "write", Description: "Writes.", Access: tool.Write},
		func(context.Context, tool.Scope, struct{}) (string, error) {
			ran <- struct{}{}
			return "written", nil
		})
	d, tn, _ := setup(t, dispatch.Config{})
	tn.Toolset = oneTool(write)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Call(ctx, tn, dispatch.Call{Name: "write"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	// A handler wrongly started on its own goroutine gets a moment to show
	// itself; a correct dispatcher never starts it, so this wait only ends
	// by the timer.
	select {
	case <-ran:
		t.Error("handler ran on a cancelled turn")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestCancelWhileRunning(t *testing.T) {
	d, tn, _ := setup(t, dispatch.Config{})
	block := make(chan struct{})
	defer close(block)
	tn.Toolset = oneTool(behave(block))
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	go func() {
		close(started)
		cancel()
	}()
	<-started
	_, err := d.Call(ctx, tn, dispatch.Call{Name: "behave", Args: []byte(`{"mode":"block"}`)})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestTimeoutIsAModelError(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	slow := tool.New(tool.Spec{Name: "slow", Description: "Slow.", Timeout: time.Nanosecond},
		func(ctx context.Context, _ tool.Scope, _ struct{}) (string, error) {
			<-block // ignores ctx: dispatch must still return at the deadline
			return "late", nil
		})
	d, tn, _ := setup(t, dispatch.Config{})
	tn.Toolset = oneTool(slow)
	got, err := d.Call(context.Background(), tn, dispatch.Call{Name: "slow"})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	want := tool.Result{IsError: true, Content: "slow timed out after 1ns."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

func oneTool(tl *tool.Tool) registry.Toolset {
	c := registry.New()
	c.Register(tl)
	return c.Select(turn.Facts{Model: turn.Model{Caps: turn.Capabilities{Tools: true}}, Agent: turn.Agent{Allow: []string{tl.Name()}}})
}

func TestLargeResultsAreStored(t *testing.T) {
	d, tn, rs := setup(t, dispatch.Config{Threshold: 100, Preview: 10, Now: func() time.Time { return time.Unix(5, 0) }})
	got, err := d.Call(context.Background(), tn, dispatch.Call{Name: "behave", Args: []byte(`{"mode":"big","n":101}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := tool.Result{
		Ref:     "res_1",
		Content: strings.Repeat("é", 10) + "\n\n[Truncated: showing 10 of 101 characters. The full result is stored as res_1; read the rest with read_tool_result.]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	stored, err := rs.GetResult(context.Background(), "o1", "c1", "res_1")
	if err != nil {
		t.Fatal(err)
	}
	wantRec := store.Result{Ref: "res_1", OrgID: "o1", ConversationID: "c1", TurnID: "t1", UserID: "u1", Tool: "behave", Body: strings.Repeat("é", 101), CreatedAt: time.Unix(5, 0).UTC()}
	if diff := cmp.Diff(wantRec, stored); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	// At the threshold exactly, nothing is stored.
	got, _ = d.Call(context.Background(), tn, dispatch.Call{Name: "behave", Args: []byte(`{"mode":"big","n":100}`)})
	if got.Ref != "" {
		t.Errorf("result at threshold was stored as %s", got.Ref)
	}
}

// TestDefaultResultRefs: without Config.IDs a stored result's reference is
// random, "res_" and 20 hex digits, and the body is stored under it.
func TestDefaultResultRefs(t *testing.T) {
	_, tn, rs := setup(t, dispatch.Config{})
	d := dispatch.New(dispatch.Config{Results: rs, Threshold: 100})
	got, err := d.Call(context.Background(), tn, dispatch.Call{Name: "behave", Args: []byte(`{"mode":"big","n":101}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^res_[0-9a-f]{20}$`).MatchString(got.Ref) {
		t.Fatalf("default reference %q, want res_ and 20 hex digits", got.Ref)
	}
	if _, err := rs.GetResult(context.Background(), "o1", "c1", got.Ref); err != nil {
		t.Errorf("body not stored under %s: %v", got.Ref, err)
	}
}

// TestUnstoredResultsStayInline: a tool that bounds its own output (the
// reader of stored results) is never stored again, or reading a page would
// hand back a new reference instead of the text.
func TestUnstoredResultsStayInline(t *testing.T) {
	reader := tool.New(tool.Spec{Name: "reader", Description: "Reads.", Unstored: true},
		func(context.Context, tool.Scope, struct{}) (string, error) { return strings.Repeat("x", 101), nil })
	d, tn, rs := setup(t, dispatch.Config{Threshold: 100, Preview: 10})
	tn.Toolset = oneTool(reader)
	got, err := d.Call(context.Background(), tn, dispatch.Call{Name: "reader"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tool.Result{Content: strings.Repeat("x", 101)}, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if len(rs.m) != 0 {
		t.Errorf("unstored result was stored: %v", rs.m)
	}
}

// TestResultQuota: the store is given the configured quota (the defaults
// for zero fields), and a body too large for it on its own leaves the
// model its preview, with no reference and no failure.
func TestResultQuota(t *testing.T) {
	d, tn, rs := setup(t, dispatch.Config{Threshold: 100, Preview: 10})
	if _, err := d.Call(context.Background(), tn, dispatch.Call{Name: "behave", Args: []byte(`{"mode":"big","n":101}`)}); err != nil {
		t.Fatal(err)
	}
	if want := (store.ResultQuota{ConversationBytes: dispatch.DefaultConversationBytes, UserBytes: dispatch.DefaultUserBytes}); rs.quota != want {
		t.Errorf("quota %+v, want the defaults %+v", rs.quota, want)
	}
	d, tn, rs = setup(t, dispatch.Config{Threshold: 100, Preview: 10, Quota: store.ResultQuota{ConversationBytes: 300}})
	got, err := d.Call(context.Background(), tn, dispatch.Call{Name: "behave", Args: []byte(`{"mode":"big","n":200}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := tool.Result{Content: strings.Repeat("é", 10) + "\n\n[Truncated: showing 10 of 200 characters. The full result is larger than the stored results quota allows, so it was not stored; ask for less at once.]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result over the quota (-want +got):\n%s", diff)
	}
	if len(rs.m) != 0 || rs.quota.UserBytes != dispatch.DefaultUserBytes {
		t.Errorf("stored %d results under quota %+v", len(rs.m), rs.quota)
	}
}

func TestStoreFailureIsInfrastructure(t *testing.T) {
	d, tn, _ := setup(t, dispatch.Config{Threshold: 10, Results: &results{fail: errors.New("disk full")}})
	if _, err := d.Call(context.Background(), tn, dispatch.Call{Name: "behave", Args: []byte(`{"mode":"big","n":11}`)}); err == nil {
		t.Error("store failure did not return an error")
	}
}

func BenchmarkCall(b *testing.B) {
	rs := &results{}
	d := dispatch.New(dispatch.Config{Results: rs})
	tn := dispatch.Turn{Toolset: oneTool(behave(nil)), Scope: tool.Scope{OrgID: "o"}}
	call := dispatch.Call{Name: "behave", Args: []byte(`{"mode":"ok"}`)}
	for b.Loop() {
		if _, err := d.Call(context.Background(), tn, call); err != nil {
			b.Fatal(err)
		}
	}
}

// TestImportedToolValidatedUnderTimeout: an imported tool's schema is an
// MCP server's, and validating against it can take long even within the
// bounds tool.Import and tool.Validate keep (here a recursive schema that
// reaches a nested object through two branches at every level, and
// arguments 16 objects deep: about 2^16 steps, under
// tool.MaxValidationSteps); its validation runs under the tool's timeout,
// so the call ends at the deadline instead of holding the turn.
func TestImportedToolValidatedUnderTimeout(t *testing.T) {
	const depth = 15
	next := func() *jsonschema.Schema {
		return &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"q": {Ref: "#/$defs/n"}}}
	}
	schema := &jsonschema.Schema{Type: "object",
		Defs:       map[string]*jsonschema.Schema{"n": {Type: "object", AllOf: []*jsonschema.Schema{next(), next()}}},
		Properties: map[string]*jsonschema.Schema{"q": {Ref: "#/$defs/n"}}}
	imported, err := tool.Import(tool.Spec{Name: "srv__fanout", Description: "Imported.", Timeout: 20 * time.Millisecond,
		Origin: tool.Origin{Server: "srv", Tool: "fanout"}},
		schema, func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) {
			return tool.Result{Content: "ran"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(strings.Repeat(`{"q":`, depth+1) + "{}" + strings.Repeat("}", depth+1))
	d, tn, _ := setup(t, dispatch.Config{})
	tn.Toolset = oneTool(imported)
	got, err := d.Call(context.Background(), tn, dispatch.Call{Name: "srv__fanout", Args: args})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	want := tool.Result{IsError: true, Content: "srv__fanout timed out after 20ms."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// TestResultImagesAreCapped: a result keeps at most tool.MaxResultImages
// images, each at most tool.MaxImageBytes and of an image type, and says
// what it dropped.
func TestResultImagesAreCapped(t *testing.T) {
	img := func(n int) tool.Image { return tool.Image{MIME: "image/png", Data: make([]byte, n)} }
	big := img(tool.MaxImageBytes + 1)
	pics := tool.New(tool.Spec{Name: "pics", Description: "Images."}, func(_ context.Context, _ tool.Scope, a args) (tool.Result, error) {
		switch a.Mode {
		case "six":
			return tool.Result{Content: "six", Images: []tool.Image{img(1), img(2), img(3), img(4), img(5), img(6)}}, nil
		case "big":
			return tool.Result{Content: "big", Images: []tool.Image{big, img(tool.MaxImageBytes), {MIME: "text/html", Data: []byte("x")}}}, nil
		}
		return tool.Result{Content: "one", Images: []tool.Image{img(7)}}, nil
	})
	d, tn, _ := setup(t, dispatch.Config{}, pics)
	tn.Toolset = registryWith(t, pics)
	tests := []struct {
		mode      string
		wantSizes []int
		wantNote  string
	}{
		{"one", []int{7}, ""},
		{"six", []int{1, 2, 3, 4}, "(2 image(s) left out: a result carries at most 4.)"},
		{"big", []int{tool.MaxImageBytes}, "(2 image(s) left out: empty, not an image or over 5 MiB.)"},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			got, err := d.Call(context.Background(), tn, dispatch.Call{Name: "pics", Args: []byte(`{"mode":"` + tc.mode + `"}`)})
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, im := range got.Images {
				sizes = append(sizes, len(im.Data))
			}
			if diff := cmp.Diff(tc.wantSizes, sizes); diff != "" {
				t.Errorf("image sizes (-want +got):\n%s", diff)
			}
			if !strings.HasSuffix(got.Content, tc.wantNote) || (tc.wantNote == "" && got.Content != "one") {
				t.Errorf("content = %q, want it to end with %q", got.Content, tc.wantNote)
			}
		})
	}
}

func registryWith(t *testing.T, tools ...*tool.Tool) registry.Toolset {
	t.Helper()
	c := registry.New()
	c.Register(tools...)
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Name()
	}
	return c.Select(turn.Facts{Model: turn.Model{Caps: turn.Capabilities{Tools: true}}, Agent: turn.Agent{Allow: names}})
}
