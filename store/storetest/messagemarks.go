package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// messageMarkCases checks the MessageMarks repository.
func messageMarkCases() []suiteCase {
	return []suiteCase{
		{"ReactionsAndPins", testMarksReactionsPins},
		{"Targets", testMarksTargets},
		{"Invalid", testMarksInvalid},
		{"Caps", testMarksCaps},
		{"EditAndDelete", testMarksEdit},
		{"Threads", testMarksThreads},
		{"ThreadCap", testMarksThreadCap},
		{"Post", testMarksPost},
		{"DeletedWithConversation", testMarksConversationDelete},
	}
}

// markedConversation stores a conversation of user with a user message
// (Seq 1), an assistant reply (2), a tool call and its result (3, 4),
// and returns it.
func (f *fixture) markedConversation(t *testing.T, id, user string) store.Conversation {
	t.Helper()
	c := f.newConversation("org", id, user)
	f.putConversation(t, c)
	ms := []store.Message{
		{ConversationID: c.ID, Role: store.RoleUser, Content: "Pin the plan, please.", CreatedAt: at(1)},
		{ConversationID: c.ID, Role: "assistant", Content: "The plan: fly Monday.", CreatedAt: at(2)},
		{ConversationID: c.ID, Role: "tool_call", ToolName: "calculate", Content: "{}", CreatedAt: at(2)},
		{ConversationID: c.ID, Role: "tool", ToolName: "calculate", Content: "2", CreatedAt: at(2)},
	}
	if _, err := f.AppendMessages(t.Context(), c.OrgID, ms); err != nil {
		fixtureFailed(t, "AppendMessages", err)
	}
	return c
}

func (f *fixture) marks(t *testing.T, c store.Conversation) []store.MessageMark {
	t.Helper()
	got, err := f.ListMessageMarks(t.Context(), c.OrgID, c.ID)
	if err != nil {
		t.Fatalf("ListMessageMarks: %v", err)
	}
	return got
}

func reaction(c store.Conversation, seq int64, emoji, actor string, minute int) store.Reaction {
	return store.Reaction{OrgID: c.OrgID, ConversationID: c.ID, Seq: seq, Emoji: emoji, Actor: actor, CreatedAt: at(minute)}
}

func pin(c store.Conversation, seq int64, minute int) store.Pin {
	return store.Pin{OrgID: c.OrgID, ConversationID: c.ID, Seq: seq, PinnedBy: store.ActorAgent, PinnedAt: at(minute)}
}

func testMarksReactionsPins(t *testing.T, f *fixture) {
	c := f.markedConversation(t, "c", "ann")
	ctx := t.Context()
	for _, r := range []store.Reaction{
		reaction(c, 1, "👍", store.ActorAgent, 3), reaction(c, 1, "🎉", c.UserID, 4), reaction(c, 1, "👍", c.UserID, 5),
		reaction(c, 1, "👍", store.ActorAgent, 6), // again: no error, no second row
		reaction(c, 2, "❤️", c.UserID, 7),
	} {
		if err := f.AddReaction(ctx, r); err != nil {
			t.Fatalf("AddReaction %s: %v", r.Emoji, err)
		}
	}
	if err := f.PinMessage(ctx, pin(c, 2, 8)); err != nil {
		t.Fatal(err)
	}
	if err := f.PinMessage(ctx, pin(c, 1, 9)); err != nil {
		t.Fatal(err)
	}
	if err := f.PinMessage(ctx, pin(c, 2, 10)); err != nil { // pinned already: keeps the first pin
		t.Fatal(err)
	}
	want := []store.MessageMark{
		{Seq: 1, PinnedAt: at(9).UTC(), Reactions: []store.ReactionCount{
			{Emoji: "👍", Actors: []string{store.ActorAgent, c.UserID}}, {Emoji: "🎉", Actors: []string{c.UserID}}}},
		{Seq: 2, PinnedAt: at(8).UTC(), Reactions: []store.ReactionCount{{Emoji: "❤️", Actors: []string{c.UserID}}}},
	}
	if diff := cmp.Diff(want, f.marks(t, c)); diff != "" {
		t.Errorf("marks (-want +got):\n%s", diff)
	}
	pins, err := f.ListPins(ctx, c.OrgID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Pin{pin(c, 1, 9), pin(c, 2, 8)}, pins, utcTimes()); diff != "" {
		t.Errorf("ListPins, latest first (-want +got):\n%s", diff)
	}
	if err := f.RemoveReaction(ctx, reaction(c, 1, "👍", store.ActorAgent, 0)); err != nil {
		t.Fatal(err)
	}
	if err := f.RemoveReaction(ctx, reaction(c, 1, "👍", store.ActorAgent, 0)); err != nil {
		t.Errorf("removing a reaction twice: %v", err)
	}
	if err := f.UnpinMessage(ctx, c.OrgID, c.ID, 2); err != nil {
		t.Fatal(err)
	}
	// 👍 now dates from the person's, after 🎉.
	want = []store.MessageMark{
		{Seq: 1, PinnedAt: at(9).UTC(), Reactions: []store.ReactionCount{
			{Emoji: "🎉", Actors: []string{c.UserID}}, {Emoji: "👍", Actors: []string{c.UserID}}}},
		{Seq: 2, Reactions: []store.ReactionCount{{Emoji: "❤️", Actors: []string{c.UserID}}}},
	}
	if diff := cmp.Diff(want, f.marks(t, c)); diff != "" {
		t.Errorf("marks after a removal and an unpin (-want +got):\n%s", diff)
	}
}

// utcTimes compares times as instants.
func utcTimes() cmp.Option {
	return cmp.Comparer(func(a, b interface{ UnixNano() int64 }) bool { return a.UnixNano() == b.UnixNano() })
}

// testMarksTargets: a Seq that is a tool message, no message, or a
// message of another organisation's conversation of the same ID is
// ErrNotFound, and nothing is written.
func testMarksTargets(t *testing.T, f *fixture) {
	c := f.markedConversation(t, "c", "ann")
	other := c
	other.OrgID = f.id("other-org")
	for _, tc := range []struct {
		name string
		c    store.Conversation
		seq  int64
	}{{"tool call", c, 3}, {"tool result", c, 4}, {"no message", c, 99}, {"another organisation", other, 1}} {
		if err := f.AddReaction(t.Context(), reaction(tc.c, tc.seq, "👍", store.ActorAgent, 3)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: AddReaction = %v, want ErrNotFound", tc.name, err)
		}
		if err := f.PinMessage(t.Context(), pin(tc.c, tc.seq, 3)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: PinMessage = %v, want ErrNotFound", tc.name, err)
		}
		err := f.EditMessage(t.Context(), store.MessageEdit{OrgID: tc.c.OrgID, ConversationID: c.ID, Seq: tc.seq, Text: "x", At: at(3)})
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: EditMessage = %v, want ErrNotFound", tc.name, err)
		}
	}
	if got := f.marks(t, c); len(got) != 0 {
		t.Errorf("marks after refusals: %v", got)
	}
}

func testMarksInvalid(t *testing.T, f *fixture) {
	c := f.markedConversation(t, "c", "ann")
	for _, emoji := range []string{"", "a b", strings.Repeat("👍", store.MaxEmojiBytes/4+1), "x\x00", "\n"} {
		if err := f.AddReaction(t.Context(), reaction(c, 1, emoji, store.ActorAgent, 3)); !errors.Is(err, store.ErrMarkInvalid) {
			t.Errorf("emoji %q: %v, want ErrMarkInvalid", emoji, err)
		}
	}
	if err := f.AddReaction(t.Context(), reaction(c, 1, "👍", "", 3)); !errors.Is(err, store.ErrMarkInvalid) {
		t.Errorf("no actor: %v, want ErrMarkInvalid", err)
	}
	for name, e := range map[string]store.MessageEdit{
		"blank":   {OrgID: c.OrgID, ConversationID: c.ID, Seq: 2, Text: "  ", At: at(3)},
		"long":    {OrgID: c.OrgID, ConversationID: c.ID, Seq: 2, Text: strings.Repeat("a", store.MaxEditRunes+1), At: at(3)},
		"no time": {OrgID: c.OrgID, ConversationID: c.ID, Seq: 2, Text: "a"},
		"no seq":  {OrgID: c.OrgID, ConversationID: c.ID, Text: "a", At: at(3)},
	} {
		if err := f.EditMessage(t.Context(), e); !errors.Is(err, store.ErrMarkInvalid) {
			t.Errorf("edit %s: %v, want ErrMarkInvalid", name, err)
		}
	}
	if got := f.marks(t, c); len(got) != 0 {
		t.Errorf("marks after invalid writes: %v", got)
	}
	ms, err := f.ListMessages(t.Context(), c.OrgID, c.ID, 0)
	if err != nil || ms[1].Content != "The plan: fly Monday." {
		t.Errorf("the reply after invalid edits: %v, %v", ms, err)
	}
}

func testMarksCaps(t *testing.T, f *fixture) {
	c := f.markedConversation(t, "c", "ann")
	ctx := t.Context()
	for i := range store.MaxReactionsPerMessage {
		if err := f.AddReaction(ctx, reaction(c, 1, fmt.Sprintf("e%d", i), store.ActorAgent, 3)); err != nil {
			t.Fatalf("reaction %d: %v", i, err)
		}
	}
	if err := f.AddReaction(ctx, reaction(c, 1, "one-more", store.ActorAgent, 3)); !errors.Is(err, store.ErrMarkLimit) {
		t.Errorf("reaction past the cap: %v, want ErrMarkLimit", err)
	}
	if err := f.AddReaction(ctx, reaction(c, 1, "e0", store.ActorAgent, 4)); err != nil {
		t.Errorf("a reaction the message has, at the cap: %v", err)
	}
	var more []store.Message
	for i := range store.MaxPinsPerConversation {
		more = append(more, store.Message{ConversationID: c.ID, Role: "assistant", Content: fmt.Sprint("reply ", i), CreatedAt: at(5)})
	}
	seqs, err := f.AppendMessages(ctx, c.OrgID, more)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range seqs {
		if err := f.PinMessage(ctx, pin(c, seq, 6)); err != nil {
			t.Fatalf("pin %d: %v", seq, err)
		}
	}
	if err := f.PinMessage(ctx, pin(c, 1, 7)); !errors.Is(err, store.ErrMarkLimit) {
		t.Errorf("pin past the cap: %v, want ErrMarkLimit", err)
	}
	if pins, _ := f.ListPins(ctx, c.OrgID, c.ID); len(pins) != store.MaxPinsPerConversation {
		t.Errorf("%d pins, want %d", len(pins), store.MaxPinsPerConversation)
	}
}

func testMarksEdit(t *testing.T, f *fixture) {
	c := f.markedConversation(t, "c", "ann")
	ctx := t.Context()
	edit := store.MessageEdit{OrgID: c.OrgID, ConversationID: c.ID, Seq: 2, Text: " The plan: fly Tuesday. ", At: at(3)}
	if err := f.EditMessage(ctx, edit); err != nil {
		t.Fatal(err)
	}
	ms, err := f.ListMessages(ctx, c.OrgID, c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ms[1].Content != "The plan: fly Tuesday." {
		t.Errorf("edited content %q", ms[1].Content)
	}
	user := edit
	user.Seq = 1
	if err := f.EditMessage(ctx, user); !errors.Is(err, store.ErrNotEditable) {
		t.Errorf("editing the person's message: %v, want ErrNotEditable", err)
	}
	if err := f.AddReaction(ctx, reaction(c, 2, "👍", c.UserID, 4)); err != nil {
		t.Fatal(err)
	}
	if err := f.PinMessage(ctx, pin(c, 2, 4)); err != nil {
		t.Fatal(err)
	}
	del := store.MessageEdit{OrgID: c.OrgID, ConversationID: c.ID, Seq: 2, Delete: true, At: at(5)}
	if err := f.EditMessage(ctx, del); err != nil {
		t.Fatal(err)
	}
	want := []store.MessageMark{{Seq: 2, EditedAt: at(3).UTC(), DeletedAt: at(5).UTC()}}
	if diff := cmp.Diff(want, f.marks(t, c)); diff != "" {
		t.Errorf("marks after a deletion, its pin and reactions gone (-want +got):\n%s", diff)
	}
	ms, _ = f.ListMessages(ctx, c.OrgID, c.ID, 0)
	if len(ms) != 4 || ms[1].Content != "" || ms[1].Seq != 2 {
		t.Errorf("the deleted message: %+v, want its row kept with no text", ms[1])
	}
	if err := f.EditMessage(ctx, edit); !errors.Is(err, store.ErrNotEditable) {
		t.Errorf("editing a deleted message: %v, want ErrNotEditable", err)
	}
	if err := f.AddReaction(ctx, reaction(c, 2, "👍", c.UserID, 6)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("reacting to a deleted message: %v, want ErrNotFound", err)
	}
}

func (f *fixture) newThread(parent store.Conversation, id string, seq int64) store.NewThread {
	c := f.newConversation("org", id, "ann")
	c.UserID, c.Title = parent.UserID, "Monday flights"
	return store.NewThread{Conversation: c, ParentID: parent.ID, ParentSeq: seq,
		First: store.Message{ConversationID: c.ID, Role: "assistant", Content: "Let's sort the flights here.", CreatedAt: at(11)}}
}

func testMarksThreads(t *testing.T, f *fixture) {
	p := f.markedConversation(t, "parent", "ann")
	ctx := t.Context()
	nt := f.newThread(p, "thread", 2)
	link, err := f.CreateThread(ctx, nt)
	if err != nil {
		t.Fatal(err)
	}
	wantLink := store.ThreadLink{OrgID: p.OrgID, ConversationID: nt.Conversation.ID, ParentID: p.ID, ParentSeq: 2, CreatedAt: at(10).UTC()}
	if diff := cmp.Diff(wantLink, link); diff != "" {
		t.Errorf("CreateThread (-want +got):\n%s", diff)
	}
	got, err := f.GetThread(ctx, p.OrgID, nt.Conversation.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantLink, got); diff != "" {
		t.Errorf("GetThread (-want +got):\n%s", diff)
	}
	if _, err := f.GetThread(ctx, p.OrgID, p.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetThread of a conversation that is no thread: %v", err)
	}
	threads, err := f.ListThreads(ctx, p.OrgID, p.ID)
	if err != nil || len(threads) != 1 || threads[0].ConversationID != nt.Conversation.ID {
		t.Errorf("ListThreads = %v, %v", threads, err)
	}
	ms, err := f.ListMessages(ctx, p.OrgID, nt.Conversation.ID, 0)
	if err != nil || len(ms) != 1 || ms[0].Content != "Let's sort the flights here." {
		t.Errorf("the thread's messages: %v, %v", ms, err)
	}
	if diff := cmp.Diff([]store.MessageMark{{Seq: 2, Threads: []string{nt.Conversation.ID}}}, f.marks(t, p)); diff != "" {
		t.Errorf("the parent's marks (-want +got):\n%s", diff)
	}
	refused := []struct {
		name string
		t    store.NewThread
		want error
	}{
		{"a second from one message", f.newThread(p, "second", 2), store.ErrMarkLimit},
		{"from a tool message", f.newThread(p, "tool", 3), store.ErrNotFound},
		{"another person's parent", func() store.NewThread { x := f.newThread(p, "bob", 0); x.Conversation.UserID = f.id("bob"); return x }(), store.ErrNotFound},
		{"an empty first message", func() store.NewThread { x := f.newThread(p, "empty", 0); x.First.Content = " "; return x }(), store.ErrMarkInvalid},
	}
	for _, r := range refused {
		if _, err := f.CreateThread(ctx, r.t); !errors.Is(err, r.want) {
			t.Errorf("%s: %v, want %v", r.name, err, r.want)
		}
		if _, err := f.GetConversation(ctx, p.OrgID, r.t.Conversation.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: the thread's conversation was written (%v)", r.name, err)
		}
	}
	taken := f.newThread(p, "taken", 0)
	taken.Conversation.ID, taken.First.ConversationID = nt.Conversation.ID, nt.Conversation.ID
	if _, err := f.CreateThread(ctx, taken); !errors.Is(err, store.ErrExists) {
		t.Errorf("a thread whose ID is taken: %v, want ErrExists", err)
	}
	if ms, _ := f.ListMessages(ctx, p.OrgID, nt.Conversation.ID, 0); len(ms) != 1 {
		t.Errorf("a refused thread appended to the one of its ID: %d messages", len(ms))
	}
}

func testMarksPost(t *testing.T, f *fixture) {
	c := f.markedConversation(t, "c", "ann")
	ctx := t.Context()
	m := store.Message{ConversationID: c.ID, Role: "assistant", Content: "From the other chat: it's Tuesday.", CreatedAt: at(30)}
	seq, err := f.PostMessage(ctx, c.OrgID, c.UserID, m)
	if err != nil || seq != 5 {
		t.Fatalf("PostMessage = %d, %v; want 5", seq, err)
	}
	if got := f.getConversation(t, c); !got.UpdatedAt.Equal(at(30)) {
		t.Errorf("UpdatedAt %v after a post, want %v", got.UpdatedAt, at(30))
	}
	if _, err := f.PostMessage(ctx, c.OrgID, f.id("bob"), m); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("posting into another person's conversation: %v, want ErrNotFound", err)
	}
	user := m
	user.Role = store.RoleUser
	if _, err := f.PostMessage(ctx, c.OrgID, c.UserID, user); !errors.Is(err, store.ErrMarkInvalid) {
		t.Errorf("posting a user message: %v, want ErrMarkInvalid", err)
	}
	r := f.newRun("org", "c", "turn", "replica", at(31))
	r.UserID = c.UserID
	f.claimRun(t, r)
	if _, err := f.PostMessage(ctx, c.OrgID, c.UserID, m); !errors.Is(err, store.ErrTurnRunning) {
		t.Errorf("posting while a turn runs: %v, want ErrTurnRunning", err)
	}
	if last, _ := f.LastMessageSeq(ctx, c.OrgID, c.ID); last != 5 {
		t.Errorf("last Seq %d after refusals, want 5", last)
	}
}

func testMarksConversationDelete(t *testing.T, f *fixture) {
	p := f.markedConversation(t, "parent", "ann")
	ctx := t.Context()
	nt := f.newThread(p, "thread", 2)
	if _, err := f.CreateThread(ctx, nt); err != nil {
		t.Fatal(err)
	}
	if err := f.AddReaction(ctx, reaction(p, 1, "👍", store.ActorAgent, 3)); err != nil {
		t.Fatal(err)
	}
	if err := f.PinMessage(ctx, pin(p, 1, 3)); err != nil {
		t.Fatal(err)
	}
	if err := f.EditMessage(ctx, store.MessageEdit{OrgID: p.OrgID, ConversationID: p.ID, Seq: 2, Text: "edited", At: at(4)}); err != nil {
		t.Fatal(err)
	}
	if err := f.DeleteConversation(ctx, p.OrgID, p.UserID, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.GetThread(ctx, p.OrgID, nt.Conversation.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the thread still links to its deleted parent: %v", err)
	}
	if _, err := f.GetConversation(ctx, p.OrgID, nt.Conversation.ID); err != nil {
		t.Errorf("the thread went with its parent: %v", err)
	}
	f.markedConversation(t, "parent", "ann") // the same ID again starts clean
	if got := f.marks(t, p); len(got) != 0 {
		t.Errorf("marks outlived their conversation: %v", got)
	}
	if pins, _ := f.ListPins(ctx, p.OrgID, p.ID); len(pins) != 0 {
		t.Errorf("pins outlived their conversation: %v", pins)
	}
}

// testMarksThreadCap: a conversation starts at most
// MaxThreadsPerConversation threads, from itself or its messages.
func testMarksThreadCap(t *testing.T, f *fixture) {
	p := f.markedConversation(t, "parent", "ann")
	for i := range store.MaxThreadsPerConversation {
		if _, err := f.CreateThread(t.Context(), f.newThread(p, fmt.Sprint("t", i), 0)); err != nil {
			t.Fatalf("thread %d: %v", i, err)
		}
	}
	over := f.newThread(p, "over", 1)
	if _, err := f.CreateThread(t.Context(), over); !errors.Is(err, store.ErrMarkLimit) {
		t.Errorf("a thread past the cap: %v, want ErrMarkLimit", err)
	}
	if _, err := f.GetConversation(t.Context(), p.OrgID, over.Conversation.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused thread's conversation was written (%v)", err)
	}
}
