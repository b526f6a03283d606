package results_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/builtin/results"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
)

var scope = tool.Scope{OrgID: "o1", UserID: "u1", ConversationID: "c1", TurnID: "t2"}

func setup(t *testing.T) *tool.Tool {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	body := strings.Repeat("0123456789", 3000) // 30,000 characters
	gone := store.Result{Ref: "res_gone", OrgID: "o1", ConversationID: "c1", Body: "gone", CreatedAt: time.Unix(0, 0)}
	if err := st.PutResult(context.Background(), gone, store.ResultQuota{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []store.Result{
		{Ref: "res_a", OrgID: "o1", ConversationID: "c1", Body: body},
		{Ref: "res_b", OrgID: "o1", ConversationID: "c1", Body: "short"},
		{Ref: "res_other", OrgID: "o1", ConversationID: "c2", Body: "other conversation"},
		{Ref: "res_org", OrgID: "o2", ConversationID: "c1", Body: "other org"},
	} {
		r.CreatedAt = time.Unix(1, 0)
		if err := st.PutResult(context.Background(), r, store.ResultQuota{}); err != nil {
			t.Fatal(err)
		}
	}
	// The newest put fills the conversation's quota: the oldest is evicted.
	c := store.Result{Ref: "res_c", OrgID: "o1", ConversationID: "c1", Body: "c", CreatedAt: time.Unix(2, 0)}
	if err := st.PutResult(context.Background(), c, store.ResultQuota{ConversationBytes: int64(len(body) + len("short") + 1)}); err != nil {
		t.Fatal(err)
	}
	return results.Tool(st)
}

func TestReadToolResult(t *testing.T) {
	tl := setup(t)
	tests := []struct {
		name    string
		args    string
		check   func(t *testing.T, content string)
		wantErr string
	}{
		{name: "default maxChars is 4000", args: `{"refs":["res_a"]}`, check: func(t *testing.T, c string) {
			want := "res_a, characters 0–4000 of 30000:\n" + strings.Repeat("0123456789", 400) + "\n[More: call again with offset=4000.]"
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}},
		{name: "offset paging", args: `{"refs":["res_a"],"maxChars":1024,"offset":29000}`, check: func(t *testing.T, c string) {
			if !strings.HasPrefix(c, "res_a, characters 29000–30000 of 30000:\n") || strings.Contains(c, "[More") {
				t.Errorf("got %q", c[:60])
			}
		}},
		{name: "maxChars 20000 allowed", args: `{"refs":["res_a"],"maxChars":20000}`, check: func(t *testing.T, c string) {
			if !strings.HasPrefix(c, "res_a, characters 0–20000 of 30000:") {
				t.Errorf("got %q", c[:60])
			}
		}},
		{name: "three refs, one missing", args: `{"refs":["res_b","res_other","res_org"]}`, check: func(t *testing.T, c string) {
			want := "res_b, characters 0–5 of 5:\nshort\n\nres_other: no such result in this conversation.\n\nres_org: no such result in this conversation."
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}},
		{name: "evicted and held", args: `{"refs":["res_gone","res_b"]}`, check: func(t *testing.T, c string) {
			want := "res_gone: evicted: stored results passed their quota and the oldest were removed; run the tool again if you still need it.\n\nres_b, characters 0–5 of 5:\nshort"
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}},
		{name: "evicted only", args: `{"refs":["res_gone"]}`, wantErr: "res_gone: evicted: stored results passed their quota"},
		{name: "four refs refused", args: `{"refs":["res_a","res_b","res_a","res_b"]}`, wantErr: `field "refs": maxItems`},
		{name: "no refs refused", args: `{"refs":[]}`, wantErr: `field "refs": minItems`},
		{name: "explicit maxChars 0 is out of range", args: `{"refs":["res_a"],"maxChars":0}`, wantErr: "maxChars must be between 1024 and 20000, got 0"},
		{name: "maxChars below range", args: `{"refs":["res_a"],"maxChars":1023}`, wantErr: "maxChars must be between 1024 and 20000, got 1023"},
		{name: "maxChars above range", args: `{"refs":["res_a"],"maxChars":20001}`, wantErr: "maxChars must be between 1024 and 20000, got 20001"},
		{name: "negative offset", args: `{"refs":["res_a"],"offset":-1}`, wantErr: "offset must be 0 or more"},
		{name: "other conversation only", args: `{"refs":["res_other"]}`, wantErr: "res_other: no such result in this conversation."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tl.Run(context.Background(), scope, json.RawMessage(tc.args))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if tool.IsInfra(err) {
					t.Errorf("model mistake reported as infrastructure failure")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, res.Content)
		})
	}
}

func TestStoreFailureIsInfra(t *testing.T) {
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tl := results.Tool(st)
	st.Close()
	_, err = tl.Run(context.Background(), scope, json.RawMessage(`{"refs":["res_a"]}`))
	if !tool.IsInfra(err) {
		t.Errorf("closed store: err = %v, want an infrastructure error", err)
	}
}
