package httpapi_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// TestMessageMarks: messages carry their reactions, pin, edit and
// thread; the pins and threads have endpoints of their own; a thread
// links back to its parent; another person sees none of it.
func TestMessageMarks(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	_, err := f.st.AppendMessages(f.ctx, "org_a", []store.Message{
		{ConversationID: "conv_bob", Role: "user", Content: "Plan the trip", CreatedAt: start},
		{ConversationID: "conv_bob", Role: "assistant", Content: "Monday", CreatedAt: start},
	})
	f.must(err)
	f.must(f.st.AddReaction(f.ctx, store.Reaction{OrgID: "org_a", ConversationID: "conv_bob", Seq: 1, Emoji: "👍", Actor: store.ActorAgent, CreatedAt: start}))
	f.must(f.st.AddReaction(f.ctx, store.Reaction{OrgID: "org_a", ConversationID: "conv_bob", Seq: 1, Emoji: "👍", Actor: "bob", CreatedAt: start}))
	f.must(f.st.PinMessage(f.ctx, store.Pin{OrgID: "org_a", ConversationID: "conv_bob", Seq: 2, PinnedBy: store.ActorAgent, PinnedAt: start}))
	f.must(f.st.EditMessage(f.ctx, store.MessageEdit{OrgID: "org_a", ConversationID: "conv_bob", Seq: 2, Text: "Tuesday", At: start}))
	_, err = f.st.CreateThread(f.ctx, store.NewThread{
		Conversation: store.Conversation{ID: "conv_thread", OrgID: "org_a", UserID: "bob", Agent: "helper", Title: "Flights", CreatedAt: start, UpdatedAt: start},
		ParentID:     "conv_bob", ParentSeq: 2,
		First: store.Message{ConversationID: "conv_thread", Role: "assistant", Content: "Flights here.", CreatedAt: start},
	})
	f.must(err)

	var msgs struct{ Messages []httpapi.Message }
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob/messages", nil), 200, &msgs)
	var marks []httpapi.MessageMarks
	for _, m := range msgs.Messages {
		marks = append(marks, m.MessageMarks)
	}
	want := []httpapi.MessageMarks{
		{Reactions: []httpapi.MessageReaction{{Emoji: "👍", Count: 2, Agent: true, Mine: true}}},
		{Pinned: true, Edited: true, Thread: "conv_thread"},
	}
	if diff := cmp.Diff(want, marks); diff != "" {
		t.Errorf("marks (-want +got):\n%s", diff)
	}
	if msgs.Messages[1].Content != "Tuesday" {
		t.Errorf("edited content %q", msgs.Messages[1].Content)
	}
	var pins struct{ Messages []httpapi.Message }
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob/pins", nil), 200, &pins)
	if len(pins.Messages) != 1 || pins.Messages[0].Seq != 2 || !pins.Messages[0].Pinned {
		t.Errorf("pins %+v", pins.Messages)
	}
	var threads struct{ Threads []httpapi.Thread }
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob/threads", nil), 200, &threads)
	if diff := cmp.Diff([]httpapi.Thread{{ID: "conv_thread", Title: "Flights", MessageSeq: 2}}, threads.Threads); diff != "" {
		t.Errorf("threads (-want +got):\n%s", diff)
	}
	var child httpapi.Conversation
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_thread", nil), 200, &child)
	if diff := cmp.Diff(&httpapi.ThreadParent{ConversationID: "conv_bob", MessageSeq: 2}, child.Parent); diff != "" {
		t.Errorf("parent (-want +got):\n%s", diff)
	}
	for _, path := range []string{"/api/conversations/conv_bob/pins", "/api/conversations/conv_bob/threads"} {
		wantError(t, f.do(f.carol, "GET", path, nil), 404, "not_found")
	}
}
