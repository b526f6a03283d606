package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// newBranchEngine is newEngine with branches.
func newBranchEngine(t *testing.T) (*engine.Engine, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	eng := engine.New(engine.Config{
		Repos:   engine.Repositories{Conversations: st, Messages: st, Turns: st, Intents: st, Branches: st},
		Runtime: engine.StaticRuntime(engine.Runtime{Catalog: builtin.NewCatalog(builtin.CatalogDeps{}), Network: "public"}),
		Now:     func() time.Time { return start },
	})
	return eng, st
}

// writeBranch stores a turn following parent, with its message and an
// answer, as a turn's start and end do.
func writeBranch(t *testing.T, st *sqlite.Store, id, parent, text string) {
	t.Helper()
	c := store.Conversation{ID: "conv_b", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}
	_, err := st.WriteTurn(context.Background(), "acme", store.TurnWrite{Claim: &c, Head: true,
		Turn: &store.Turn{ID: id, OrgID: "acme", UserID: "ana", ConversationID: c.ID, ParentID: parent, Agent: "helper",
			Status: store.TurnDone, StartedAt: start},
		Messages: []store.Message{
			{ConversationID: c.ID, TurnID: id, Role: "user", Content: text, CreatedAt: start},
			{ConversationID: c.ID, TurnID: id, Role: "assistant", Content: "re: " + text, CreatedAt: start},
		}})
	if err != nil {
		t.Fatal(err)
	}
}

// said is the user and assistant texts of msgs.
func said(msgs []store.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

// TestCollectBranch: a turn's history is the branch shown; with Replaces
// it is the history up to the replaced turn's parent and the turn follows
// that parent; a turn of no branch of the conversation, and a place that
// holds store.MaxSiblings turns, are refused clearly.
func TestCollectBranch(t *testing.T) {
	ctx := context.Background()
	eng, st := newBranchEngine(t)
	writeBranch(t, st, "t1", "", "one")
	writeBranch(t, st, "t2", "t1", "two")
	writeBranch(t, st, "t3", "t1", "two again")
	r := request("ana", "conv_b", false)
	for _, tc := range []struct {
		name, replaces, parent string
		history                []string
	}{
		{"follows the head", "", "t3", []string{"one", "re: one", "two again", "re: two again"}},
		{"regenerates t3", "t3", "t1", []string{"one", "re: one"}},
		{"edits t1", "t1", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.Replaces = tc.replaces
			c, err := eng.Collect(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			p, err := eng.Prepare(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.history, said(p.Start.History)); d != "" {
				t.Errorf("history (-want +got):\n%s", d)
			}
			if parent, branched := c.Parent(); parent != tc.parent || !branched || p.Start.Parent != tc.parent || !p.Start.Branch {
				t.Errorf("parent %q (%v), start %q (%v); want %q", parent, branched, p.Start.Parent, p.Start.Branch, tc.parent)
			}
		})
	}

	r.Replaces = "t_other"
	var ie *engine.InputError
	if _, err := eng.Collect(ctx, r); !errors.As(err, &ie) || !strings.Contains(ie.Msg, `no turn "t_other"`) {
		t.Errorf("replaces a turn of no branch: %v", err)
	}
	for i := 3; i <= store.MaxSiblings; i++ { // t4 … t50 beside t2 and t3
		writeBranch(t, st, fmt.Sprintf("t%d", i+1), "t1", "two")
	}
	r.Replaces = "t2"
	if _, err := eng.Collect(ctx, r); !errors.As(err, &ie) || !strings.Contains(ie.Msg, "50 versions") {
		t.Errorf("a place with %d turns: %v, want the cap's refusal", store.MaxSiblings, err)
	}
}
