package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// Seeded names the records SeedConversation wrote under one conversation.
type Seeded struct {
	Conversation store.Conversation
	TurnID       string
	ResultRef    string
	BlobID       string
	AttachmentID string
	ArtifactID   string
	TaskID       string
}

// SeedConversation writes, through the repositories, one record of every
// kind a conversation holds: the conversation (titled, with a model), a
// turn with a message of every role and a usage record (one WriteTurn,
// as a turn writes them), the turn's events, a stored tool result,
// Deliberate Tool Mode's open targets, an attached blob, an attachment
// with one indexed chunk, its short-term memory and an HTML artifact
// with a saved version and a draft. id is the
// conversation's ID and tag makes the other IDs unique; a backend's own
// tests use it to look, table by table, for what a delete left behind.
func SeedConversation(t *testing.T, st store.Store, orgID, userID, id, tag string) Seeded {
	t.Helper()
	ctx := t.Context()
	start := time.Date(2025, time.April, 1, 9, 0, 0, 0, time.UTC)
	s := Seeded{
		Conversation: store.Conversation{ID: id, OrgID: orgID, UserID: userID, Agent: "assistant",
			Title: "Seeded " + tag, Model: "openai:gpt-4.1", CreatedAt: start, UpdatedAt: start},
		TurnID: "turn-" + tag, ResultRef: "res-" + tag, BlobID: "blob-" + tag,
		AttachmentID: "att-" + tag, ArtifactID: "art-" + tag, TaskID: "task-" + tag,
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seed %s: %s: %v", id, what, err)
		}
	}
	// The conversation is a thread of another of the person's, started
	// with a message of the agent's (the thread's first).
	parent := s.Conversation
	parent.ID, parent.Title = "parent-"+tag, "Parent of "+tag
	must("put parent", st.PutConversation(ctx, parent))
	_, err := st.CreateThread(ctx, store.NewThread{Conversation: s.Conversation, ParentID: parent.ID,
		First: store.Message{ConversationID: id, TurnID: s.TurnID, Role: "assistant", Content: "thread start of " + tag, CreatedAt: start}})
	must("create thread", err)
	var msgs []store.Message
	for _, role := range []string{"context", "user", "assistant", "tool_call", "tool", store.RoleThought} {
		msgs = append(msgs, store.Message{ConversationID: id, TurnID: s.TurnID, Role: role,
			Content: role + " text of " + tag, ToolName: "calc", ToolCallID: "call-1", CreatedAt: start})
	}
	claim := s.Conversation
	_, err = st.WriteTurn(ctx, orgID, store.TurnWrite{
		Claim: &claim,
		Turn: &store.Turn{ID: s.TurnID, OrgID: orgID, UserID: userID, ConversationID: id, Agent: "assistant",
			Model: "openai:gpt-4.1", Payer: orgID, Tools: []string{"calc"}, Excluded: []store.Exclusion{{Name: "web_search", Reason: "off"}},
			Status: store.TurnDone, Steps: 1, StartedAt: start, EndedAt: start.Add(time.Second)},
		Messages: msgs,
		Usage: &store.Usage{OrgID: orgID, ConversationID: id, TurnID: s.TurnID, Payer: orgID, UserID: userID, Model: "openai:gpt-4.1",
			Step: 1, InputTokens: 100, OutputTokens: 10, CostMicros: 42, CreatedAt: start},
	})
	must("write turn", err)
	must("events", st.AppendTurnEvents(ctx, orgID, id, s.TurnID, []store.TurnEvent{
		{Seq: 1, Kind: "text", Data: []byte(`{"type":"text"}`), CreatedAt: start},
		{Seq: 2, Kind: "done", Data: []byte(`{"type":"done"}`), CreatedAt: start},
	}))
	must("result", st.PutResult(ctx, store.Result{Ref: s.ResultRef, OrgID: orgID, ConversationID: id, TurnID: s.TurnID,
		UserID: userID, Tool: "calc", Body: "result of " + tag, CreatedAt: start}, store.ResultQuota{}))
	_, err = st.OpenIntentTargets(ctx, orgID, id, []string{"web", "calc"})
	must("intent targets", err)
	_, err = st.PutBlob(ctx, store.Blob{OrgID: orgID, ID: s.BlobID, OwnerID: userID, ConversationID: id,
		Name: "notes.txt", MediaType: "text/plain", CreatedAt: start, Data: []byte("attached to " + tag)}, store.BlobQuota{})
	must("blob", err)
	must("short-term memory", st.PutShortTerm(ctx, store.ShortTerm{OrgID: orgID, Thread: "conversation:" + id,
		ConversationID: id, Text: "working notes of " + tag, UpdatedAt: start}))
	_, err = st.PutAttachment(ctx, store.NewAttachment{
		Attachment: store.Attachment{OrgID: orgID, ID: s.AttachmentID, OwnerID: userID, ConversationID: id,
			Name: "report.md", MediaType: "text/markdown", CreatedAt: start, Kind: "text", Status: store.AttachmentReady},
		Data: []byte("attached report of " + tag), Text: "attached report of " + tag,
		Chunks: []store.AttachmentChunk{{Seq: 0, Text: "attached report of " + tag}},
	}, store.AttachmentQuota{})
	must("attachment", err)
	art, err := st.CreateArtifact(ctx, store.NewArtifact{Artifact: store.Artifact{OrgID: orgID, ID: s.ArtifactID, OwnerID: userID,
		ConversationID: id, Title: "Slides of " + tag, Kind: store.ArtifactHTML, Content: "<h1>v1 of " + tag + "</h1>",
		CreatedAt: start}}, store.ArtifactQuota{})
	must("artifact", err)
	_, err = st.ChangeArtifact(ctx, store.ArtifactChange{OrgID: orgID, ConversationID: id, ID: s.ArtifactID,
		Change: store.ArtifactRewrite, Content: "<h1>draft of " + tag + "</h1>", AsDraft: true, Base: art.Base(), At: start}, store.ArtifactQuota{})
	must("artifact draft", err)
	// Paused: no claim of the suite's takes it.
	_, err = st.CreateTask(ctx, store.Task{OrgID: orgID, ID: s.TaskID, UserID: userID, Agent: "assistant", ConversationID: id,
		Title: "Check in", Instruction: "Ask how " + tag + " is doing.", Kind: store.ScheduleInterval, Every: 3 * time.Hour,
		Timezone: "Europe/Paris", Tools: []string{"save_memory"}, State: store.TaskPaused, NextRunAt: start.Add(time.Hour),
		CreatedAt: start, UpdatedAt: start})
	must("scheduled task", err)
	seedMarks(t, st, s, start)
	return s
}

// seedMarks marks the seeded messages: a reaction and a pin on the
// person's message, an edit (to the same text) of the agent's reply.
func seedMarks(t *testing.T, st store.Store, s Seeded, start time.Time) {
	t.Helper()
	ctx, c := t.Context(), s.Conversation
	ms, err := st.ListMessages(ctx, c.OrgID, c.ID, 0)
	if err != nil {
		t.Fatalf("seed %s: list messages: %v", c.ID, err)
	}
	for _, m := range ms {
		switch {
		case m.Role == store.RoleUser:
			err = errors.Join(st.AddReaction(ctx, store.Reaction{OrgID: c.OrgID, ConversationID: c.ID, Seq: m.Seq, Emoji: "👍", Actor: store.ActorAgent, CreatedAt: start}),
				st.PinMessage(ctx, store.Pin{OrgID: c.OrgID, ConversationID: c.ID, Seq: m.Seq, PinnedBy: c.UserID, PinnedAt: start}))
		case m.Role == "assistant" && m.TurnID == s.TurnID && m.Seq > 1:
			err = st.EditMessage(ctx, store.MessageEdit{OrgID: c.OrgID, ConversationID: c.ID, Seq: m.Seq, Text: m.Content, At: start})
		}
		if err != nil {
			t.Fatalf("seed %s: marks: %v", c.ID, err)
		}
	}
}

// conversationView is what the repositories answer about a seeded
// conversation: equal before and after, for one that must be untouched.
type conversationView struct {
	Conversation store.Conversation
	Messages     []store.Message
	Turn         store.Turn
	Events       []store.TurnEvent
	Result       store.Result
	Targets      []string
	Blobs        []store.Blob
	Attachments  []store.Attachment
	Artifacts    []store.Artifact
	Tasks        []store.Task
	Artifact     store.Artifact
	Hits         []store.AttachmentHit
	Usage        []store.Usage
	Found        []string
}

// view reads everything of s through the repositories, failing the test
// on an error other than not found.
func (f *fixture) view(t *testing.T, s Seeded) conversationView {
	t.Helper()
	ctx, c := t.Context(), s.Conversation
	var v conversationView
	var errs []error
	keep := func(err error) {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	var err error
	v.Conversation, err = f.GetConversation(ctx, c.OrgID, c.ID)
	keep(err)
	v.Messages, err = f.ListMessages(ctx, c.OrgID, c.ID, 0)
	keep(err)
	v.Turn, err = f.GetTurn(ctx, c.OrgID, s.TurnID)
	keep(err)
	v.Events, err = f.ListTurnEvents(ctx, c.OrgID, s.TurnID, 0, 0)
	keep(err)
	v.Result, err = f.GetResult(ctx, c.OrgID, c.ID, s.ResultRef)
	keep(err)
	v.Targets, err = f.OpenIntentTargets(ctx, c.OrgID, c.ID, nil)
	keep(err)
	list, err := f.ListConversationBlobs(ctx, c.OrgID, c.ID, store.BlobPage{})
	keep(err)
	v.Blobs = list.Blobs
	v.Attachments, err = f.ListAttachments(ctx, c.OrgID, c.ID)
	keep(err)
	v.Tasks, err = f.ListTasks(ctx, c.OrgID, store.TaskFilter{ConversationID: c.ID})
	keep(err)
	v.Artifacts, err = f.ListArtifacts(ctx, c.OrgID, c.ID)
	keep(err)
	v.Artifact, err = f.GetArtifact(ctx, c.OrgID, c.ID, s.ArtifactID)
	keep(err)
	v.Hits, err = f.SearchAttachments(ctx, store.AttachmentSearch{OrgID: c.OrgID, ConversationID: c.ID, Text: "attached report"})
	keep(err)
	v.Usage, err = f.ListUsage(ctx, c.OrgID, s.TurnID)
	keep(err)
	v.Found = f.find(t, store.ConversationQuery{OrgID: c.OrgID, UserID: c.UserID, Text: "text of"})
	if len(errs) > 0 {
		t.Fatalf("reading conversation %s: %v", c.ID, errors.Join(errs...))
	}
	return v
}

// testConversationDelete: deleting a conversation leaves nothing of it
// that a repository answers with, keeps its usage detached (the payer's
// sum unchanged), and touches neither the user's other conversation nor
// the conversation of the same ID in another organisation.
func testConversationDelete(t *testing.T, f *fixture) {
	org, user := f.id("org"), f.id("user")
	gone := SeedConversation(t, f.Store, org, user, f.id("gone"), f.id("a"))
	kept := SeedConversation(t, f.Store, org, user, f.id("kept"), f.id("b"))
	twin := SeedConversation(t, f.Store, f.id("other-org"), user, f.id("gone"), f.id("c"))
	keptBefore, twinBefore := f.view(t, kept), f.view(t, twin)
	from, to := at(0).Add(-24*time.Hour*365), at(0).Add(24*time.Hour*365)
	spentBefore, err := f.SumUsage(t.Context(), org, org, from, to)
	if err != nil {
		t.Fatalf("SumUsage: %v", err)
	}
	if err := f.DeleteConversation(t.Context(), org, user, gone.Conversation.ID); err != nil {
		t.Fatalf("DeleteConversation: %v", err)
	}
	v := f.view(t, gone)
	if v.Conversation.ID != "" || len(v.Messages) > 0 || v.Turn.ID != "" || len(v.Events) > 0 ||
		v.Result.Ref != "" || len(v.Targets) > 0 || len(v.Blobs) > 0 || len(v.Attachments) > 0 || len(v.Hits) > 0 ||
		len(v.Artifacts) > 0 || v.Artifact.ID != "" {
		t.Errorf("after the delete the repositories still answer: %+v", v)
	}
	if _, err := f.GetBlob(t.Context(), org, gone.BlobID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetBlob of the deleted conversation's blob: %v, want not found", err)
	}
	if len(v.Usage) != 1 || v.Usage[0].ConversationID != "" || v.Usage[0].CostMicros != 42 {
		t.Errorf("usage after the delete: %+v, want the one record, detached (ConversationID \"\")", v.Usage)
	}
	spent, err := f.SumUsage(t.Context(), org, org, from, to)
	if err != nil || spent != spentBefore {
		t.Errorf("the payer's spend after the delete: %+v (%v), want %+v as before", spent, err, spentBefore)
	}
	if d := diff([]string{kept.Conversation.ID}, v.Found); d != "" {
		t.Errorf("search after the delete (-want +got):\n%s", d)
	}
	keptBefore.Found = []string{kept.Conversation.ID}
	if d := diff(keptBefore, f.view(t, kept)); d != "" {
		t.Errorf("the user's other conversation changed (-before +after):\n%s", d)
	}
	if d := diff(twinBefore, f.view(t, twin)); d != "" {
		t.Errorf("the same ID in another organisation changed (-before +after):\n%s", d)
	}
}

// testConversationDeleteOthers: another user's conversation, one of
// another organisation and a missing one are ErrNotFound, deleting
// nothing.
func testConversationDeleteOthers(t *testing.T, f *fixture) {
	org, user := f.id("org"), f.id("user")
	s := SeedConversation(t, f.Store, org, user, f.id("conv"), f.id("a"))
	before := f.view(t, s)
	wantNotFound(t, "another user's", f.DeleteConversation(t.Context(), org, f.id("intruder"), s.Conversation.ID))
	wantNotFound(t, "another organisation's", f.DeleteConversation(t.Context(), f.id("other-org"), user, s.Conversation.ID))
	wantNotFound(t, "a missing one", f.DeleteConversation(t.Context(), org, user, f.id("missing")))
	if d := diff(before, f.view(t, s)); d != "" {
		t.Errorf("refused deletes changed the conversation (-before +after):\n%s", d)
	}
}

// testConversationDeleteRunning: a conversation whose run is held (even
// one whose lease has passed but is not reaped) is ErrTurnRunning and
// keeps everything; once the run ends it deletes.
func testConversationDeleteRunning(t *testing.T, f *fixture) {
	org, user := f.id("org"), f.id("user")
	s := SeedConversation(t, f.Store, org, user, f.id("conv"), f.id("a"))
	r := store.Run{OrgID: org, ConversationID: s.Conversation.ID, TurnID: s.TurnID, UserID: user,
		Replica: f.id("replica"), StartedAt: at(0), ExpiresAt: at(1)}
	f.claimRun(t, r)
	before := f.view(t, s)
	if err := f.DeleteConversation(t.Context(), org, user, s.Conversation.ID); !errors.Is(err, store.ErrTurnRunning) {
		t.Fatalf("DeleteConversation while running: %v, want store.ErrTurnRunning", err)
	}
	if d := diff(before, f.view(t, s)); d != "" {
		t.Errorf("a refused delete changed the conversation (-before +after):\n%s", d)
	}
	if err := f.EndRun(t.Context(), org, s.Conversation.ID, s.TurnID, at(2)); err != nil {
		t.Fatalf("EndRun: %v", err)
	}
	if err := f.DeleteConversation(t.Context(), org, user, s.Conversation.ID); err != nil {
		t.Fatalf("DeleteConversation after the run ended: %v", err)
	}
}

// testConversationDeleteThenReuse: a deleted conversation's ID starts
// afresh when claimed again: a new owner may take it, and its messages
// are numbered from 1.
func testConversationDeleteThenReuse(t *testing.T, f *fixture) {
	org, user := f.id("org"), f.id("user")
	s := SeedConversation(t, f.Store, org, user, f.id("conv"), f.id("a"))
	if err := f.DeleteConversation(t.Context(), org, user, s.Conversation.ID); err != nil {
		t.Fatalf("DeleteConversation: %v", err)
	}
	fresh := store.Conversation{ID: s.Conversation.ID, OrgID: org, UserID: f.id("newcomer"), Agent: "assistant", CreatedAt: at(5), UpdatedAt: at(5)}
	if got := f.claim(t, fresh); got.UserID != fresh.UserID || got.Title != "" || got.Model != "" {
		t.Errorf("claim after the delete: %+v, want a fresh conversation of the newcomer", got)
	}
	seq, err := f.AppendMessage(t.Context(), org, store.Message{ConversationID: fresh.ID, Role: "user", Content: "new start", CreatedAt: at(6)})
	if err != nil || seq != 1 {
		t.Errorf("first message after the delete: seq %d (%v), want 1", seq, err)
	}
}
