package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
)

// TestTranscriptOwnership: the owner reads a conversation's messages,
// oldest first; another user's conversation reads as a missing one.
func TestTranscriptOwnership(t *testing.T) {
	ctx := context.Background()
	_, st := newEngine(t)
	if err := st.PutConversation(ctx, store.Conversation{ID: "conv_a", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutConversation(ctx, store.Conversation{ID: "conv_e", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "second"} {
		if _, err := st.AppendMessage(ctx, "acme", store.Message{ConversationID: "conv_a", TurnID: "t1", Role: "user", Content: text, CreatedAt: start}); err != nil {
			t.Fatal(err)
		}
	}
	repos := engine.Repositories{Conversations: st, Messages: st}
	msgs, err := repos.Transcript(ctx, "acme", "ana", "conv_a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Content)
	}
	if d := cmp.Diff([]string{"first", "second"}, got); d != "" {
		t.Errorf("owner's transcript (-want +got):\n%s", d)
	}
	if empty, err := repos.Transcript(ctx, "acme", "ana", "conv_e"); err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("empty conversation: %v, %v; want [] and no error", empty, err)
	}
	for _, tc := range []struct{ name, org, user, conv string }{
		{"another user", "acme", "bo", "conv_a"},
		{"missing", "acme", "ana", "conv_x"},
		{"another organisation", "other", "ana", "conv_a"},
	} {
		if msgs, err := repos.Transcript(ctx, tc.org, tc.user, tc.conv); !errors.Is(err, engine.ErrNoConversation) || msgs != nil {
			t.Errorf("%s: %v, %v; want ErrNoConversation", tc.name, msgs, err)
		}
		if c, err := engine.OwnConversation(ctx, st, tc.org, tc.user, tc.conv); !errors.Is(err, engine.ErrNoConversation) || c.ID != "" {
			t.Errorf("OwnConversation, %s: %+v, %v; want ErrNoConversation", tc.name, c, err)
		}
	}
	if c, err := engine.OwnConversation(ctx, st, "acme", "ana", "conv_a"); err != nil || c.ID != "conv_a" {
		t.Errorf("OwnConversation of the owner: %+v, %v", c, err)
	}
}

// TestRecordClaimsConversation: recording a session creates its
// conversation owned by its caller and stores its turn, under the ids
// given; another user's session is refused there with nothing written.
func TestRecordClaimsConversation(t *testing.T) {
	ctx := context.Background()
	eng, st := newEngine(t)
	ana, err := eng.Select(ctx, request("ana", "", false))
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Record(ctx, ana, "turn_mcp", "conv_mcp"); err != nil {
		t.Fatalf("Record: %v", err)
	}
	c, err := st.GetConversation(ctx, "acme", "conv_mcp")
	if err != nil || c.UserID != "ana" || c.Agent != "helper" || !c.CreatedAt.Equal(start) {
		t.Fatalf("conversation = %+v, %v; want Ana's, of helper, created at the clock's time", c, err)
	}
	rec, err := st.GetTurn(ctx, "acme", "turn_mcp")
	if err != nil {
		t.Fatal(err)
	}
	if rec.ConversationID != "conv_mcp" || rec.UserID != "ana" || !rec.StartedAt.Equal(start) || len(rec.Tools) == 0 || rec.Status != store.TurnDone {
		t.Errorf("turn = %+v; want Ana's done turn in conv_mcp with its toolset, started at the clock's time", rec)
	}

	bo, err := eng.Select(ctx, request("bo", "", false))
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Record(ctx, bo, "turn_bo", "conv_mcp"); !errors.Is(err, engine.ErrNoConversation) {
		t.Errorf("Bo's session in Ana's conversation: %v, want ErrNoConversation", err)
	}
	if _, err := st.GetTurn(ctx, "acme", "turn_bo"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("refused session stored its turn: %v", err)
	}
	if after, _ := st.GetConversation(ctx, "acme", "conv_mcp"); after.UserID != "ana" || !after.UpdatedAt.Equal(c.UpdatedAt) {
		t.Errorf("refused session changed the conversation: %+v", after)
	}
}

// TestRecordFactsIDs: without ids the session's turn and conversation
// are its facts'; a session with no conversation at all records nothing.
func TestRecordFactsIDs(t *testing.T) {
	ctx := context.Background()
	eng, st := newEngine(t)
	s, err := eng.Select(ctx, request("ana", "conv_cli", false))
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Record(ctx, s, "", ""); err != nil {
		t.Fatal(err)
	}
	if rec, err := st.GetTurn(ctx, "acme", s.Facts().TurnID); err != nil || rec.ConversationID != "conv_cli" {
		t.Errorf("turn %q = %+v, %v; want it in conv_cli", s.Facts().TurnID, rec, err)
	}
	none, err := eng.Select(ctx, request("ana", "", false))
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Record(ctx, none, "turn_x", ""); err == nil {
		t.Error("a session without a conversation was recorded")
	}
	if _, err := st.GetTurn(ctx, "acme", "turn_x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("turn_x: %v, want not found", err)
	}
}
