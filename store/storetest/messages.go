package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// messageCases checks the Messages repository.
func messageCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testMessageRoundTrip},
		{"SeqPerConversation", testMessageSeqPerConversation},
		{"BeforeSeq", testMessageBeforeSeq},
		{"Scoped", testMessageScoped},
		{"ConcurrentAppend", testMessageConcurrentAppend},
		{"AppendBatch", testMessageAppendBatch},
		{"RawBytes", testMessageRawBytes},
		{"BatchInterleaved", testMessageBatchInterleaved},
		{"ConcurrentBatches", testMessageConcurrentBatches},
		{"LastSeq", testMessageLastSeq},
	}
}

// testMessageAppendBatch appends a transcript in one batch across two
// conversations, after a single append, and checks order, Seqs and that an
// empty batch stores nothing; a cancelled batch is checked with the other
// cancelled writes.
func testMessageAppendBatch(t *testing.T, f *fixture) {
	org := f.id("org")
	first := f.appendAll(t, org, f.transcript("a")[:1])
	batch := append(f.transcript("a")[1:], f.transcript("b")...)
	seqs, err := f.AppendMessages(t.Context(), org, batch)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	n := len(f.transcript("a"))
	want := append(slices.Clone(first), batch[:n-1]...)
	for i := 1; i < n; i++ {
		want[i].Seq = int64(i) + first[0].Seq
	}
	if got := seqs[:n-1]; !slices.Equal(got, seqsOf(want[1:])) {
		t.Errorf("Seqs in a %v, want %v", got, seqsOf(want[1:]))
	}
	if d := diff(want, f.list(t, org, f.id("a"), 0)); d != "" {
		t.Errorf("conversation a after the batch (-want +got):\n%s", d)
	}
	if got := seqsOf(f.list(t, org, f.id("b"), 0)); !slices.Equal(got, seqs[n-1:]) || got[0] != 1 {
		t.Errorf("conversation b Seqs %v, want %v starting at 1", got, seqs[n-1:])
	}
	if seqs, err := f.AppendMessages(t.Context(), org, nil); err != nil || len(seqs) != 0 {
		t.Errorf("empty batch: %v, %v", seqs, err)
	}
}

// rawBytes is text no database text type takes as is: a NUL byte and
// bytes that are not UTF-8, as a tool result or a model's output may hold.
const rawBytes = "before\x00after \xff\xfe half-rune \xe2\x82 end"

// testMessageRawBytes: message content is kept byte for byte, NUL and
// invalid UTF-8 included, alone and in a batch.
func testMessageRawBytes(t *testing.T, f *fixture) {
	org := f.id("org")
	msgs := f.transcript("conv")[:2]
	msgs[0].Content, msgs[1].Content = rawBytes, "\x00"
	want := f.appendAll(t, org, msgs[:1])
	seqs, err := f.AppendMessages(t.Context(), org, msgs[1:])
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	batch := msgs[1]
	batch.Seq = seqs[0]
	want = append(want, batch)
	got := f.list(t, org, f.id("conv"), 0)
	if d := diff(want, got); d != "" {
		t.Errorf("ListMessages (-want +got):\n%s", d)
	}
}

// testMessageBatchInterleaved: a batch alternating between two
// conversations gives each conversation's messages increasing Seqs in
// batch order, and each conversation lists them in that order.
func testMessageBatchInterleaved(t *testing.T, f *fixture) {
	org := f.id("org")
	var batch []store.Message
	for i := range 6 {
		conv := []string{"a", "b"}[i%2]
		batch = append(batch, store.Message{ConversationID: f.id(conv), Role: "user",
			Content: content(i%2, i), CreatedAt: at(i)})
	}
	seqs, err := f.AppendMessages(t.Context(), org, batch)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	for c, conv := range []string{"a", "b"} {
		var want []store.Message
		for i := c; i < len(batch); i += 2 {
			m := batch[i]
			m.Seq = seqs[i]
			want = append(want, m)
		}
		got := f.list(t, org, f.id(conv), 0)
		if d := diff(want, got); d != "" {
			t.Errorf("conversation %s (-want +got):\n%s", conv, d)
		}
		if s := seqsOf(got); !strictlyIncreasing(s) || s[0] != 1 {
			t.Errorf("conversation %s: Seqs %v, want increasing from 1", conv, s)
		}
	}
}

// testMessageConcurrentBatches: writers append batches spanning the same
// two conversations, half of them in one order and half in the other, at
// once; every batch succeeds (none deadlocks for good), and each
// conversation holds every message once, under distinct Seqs.
func testMessageConcurrentBatches(t *testing.T, f *fixture) {
	const writers, each = 6, 10
	org := f.id("org")
	convs := []string{f.id("a"), f.id("b")}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			first, second := convs[w%2], convs[1-w%2]
			for i := range each {
				batch := []store.Message{
					{ConversationID: first, Role: "user", Content: content(w, 2*i), CreatedAt: at(i)},
					{ConversationID: second, Role: "user", Content: content(w, 2*i+1), CreatedAt: at(i)},
				}
				if _, err := f.AppendMessages(t.Context(), org, batch); err != nil {
					t.Errorf("writer %d: AppendMessages %d: %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	var all []string
	for _, conv := range convs {
		got := f.list(t, org, conv, 0)
		if s := seqsOf(got); len(got) != writers*each || !strictlyIncreasing(s) {
			t.Errorf("conversation %s: %d messages, Seqs %v; want %d, strictly increasing", conv, len(got), s, writers*each)
		}
		for _, m := range got {
			all = append(all, m.Content)
		}
	}
	slices.Sort(all)
	if d := diff(contentsFor(writers, 2*each), all); d != "" {
		t.Errorf("messages lost or duplicated (-want +got):\n%s", d)
	}
}

// transcript returns one message of each kind, in conversation conv: an
// assistant reply calling two tools, one result truncated into the result
// store and one reporting a failure.
func (f *fixture) transcript(conv string) []store.Message {
	base := store.Message{ConversationID: f.id(conv), TurnID: f.id("turn")}
	msgs := []store.Message{
		{Role: "context", Content: "Today is Sunday."},
		{Role: "user", Content: "Find flights to Zürich 🙂"},
		{Role: "assistant", Content: "Searching."},
		{Role: "tool_call", ToolName: "flights.search", ToolCallID: "call_1", Content: `{"to":"ZRH"}`},
		{Role: "tool_call", ToolName: "hotels.search", ToolCallID: "call_2", Content: `{}`},
		{Role: "tool", ToolName: "flights.search", ToolCallID: "call_1", Content: "3 flights\n(truncated)",
			Ref: f.id("res_1")},
		{Role: "tool", ToolName: "hotels.search", ToolCallID: "call_2", Content: "Not run: the turn's calls are used up.",
			IsError: true, Refused: true},
		{Role: "assistant", Content: ""},
	}
	for i := range msgs {
		msgs[i].ConversationID, msgs[i].TurnID = base.ConversationID, base.TurnID
		msgs[i].CreatedAt = at(i)
	}
	return msgs
}

// appendAll appends msgs to org and returns them with their assigned Seqs.
func (f *fixture) appendAll(t *testing.T, org string, msgs []store.Message) []store.Message {
	t.Helper()
	out := slices.Clone(msgs)
	for i := range out {
		out[i].Seq = 1000 + int64(i) // AppendMessage must ignore it
		seq, err := f.AppendMessage(t.Context(), org, out[i])
		if err != nil {
			t.Fatalf("AppendMessage %d: %v", i, err)
		}
		out[i].Seq = seq
	}
	return out
}

// list returns ListMessages' answer, failing the test on error.
func (f *fixture) list(t *testing.T, org, conv string, beforeSeq int64) []store.Message {
	t.Helper()
	got, err := f.ListMessages(t.Context(), org, conv, beforeSeq)
	if err != nil {
		t.Fatalf("ListMessages(before %d): %v", beforeSeq, err)
	}
	return got
}

func testMessageRoundTrip(t *testing.T, f *fixture) {
	org := f.id("org")
	want := f.appendAll(t, org, f.transcript("conv"))
	got := f.list(t, org, f.id("conv"), 0)
	if d := diff(want, got); d != "" {
		t.Errorf("ListMessages mismatch (-want +got):\n%s", d)
	}
	for _, m := range got {
		wantUTC(t, "CreatedAt", m.CreatedAt)
	}
}

// testMessageSeqPerConversation interleaves two conversations and checks
// each gets positive, strictly increasing Seqs of its own.
func testMessageSeqPerConversation(t *testing.T, f *fixture) {
	org := f.id("org")
	a, b := f.transcript("a"), f.transcript("b")
	seqs := map[string][]int64{}
	for i := range a {
		for _, m := range []store.Message{a[i], b[i]} {
			seq, err := f.AppendMessage(t.Context(), org, m)
			if err != nil {
				t.Fatalf("AppendMessage: %v", err)
			}
			seqs[m.ConversationID] = append(seqs[m.ConversationID], seq)
		}
	}
	for conv, s := range seqs {
		if !strictlyIncreasing(s) || s[0] < 1 {
			t.Errorf("conversation %s: Seqs %v, want positive and strictly increasing", conv, s)
		}
		if got := seqsOf(f.list(t, org, conv, 0)); !slices.Equal(got, s) {
			t.Errorf("conversation %s: listed Seqs %v, want %v", conv, got, s)
		}
	}
}

func testMessageBeforeSeq(t *testing.T, f *fixture) {
	org, conv := f.id("org"), f.id("conv")
	all := f.appendAll(t, org, f.transcript("conv"))
	last := all[len(all)-1].Seq
	tests := []struct {
		name      string
		beforeSeq int64
		want      []store.Message
	}{
		{"Zero", 0, all},
		{"Negative", -1, all},
		{"AfterLast", last + 1, all},
		{"AtLast", last, all[:len(all)-1]},
		{"Middle", all[2].Seq, all[:2]},
		{"AtFirst", all[0].Seq, nil},
		{"One", 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := diff(tc.want, f.list(t, org, conv, tc.beforeSeq)); d != "" {
				t.Errorf("ListMessages(before %d) (-want +got):\n%s", tc.beforeSeq, d)
			}
		})
	}
}

// testMessageLastSeq checks LastMessageSeq: 0 before any message, the
// last Seq after each append (single or batched), and 0 for another
// organisation or conversation.
func testMessageLastSeq(t *testing.T, f *fixture) {
	org, conv := f.id("org"), f.id("conv")
	last := func(org, conv string) int64 {
		t.Helper()
		seq, err := f.LastMessageSeq(t.Context(), org, conv)
		if err != nil {
			t.Fatalf("LastMessageSeq: %v", err)
		}
		return seq
	}
	if got := last(org, conv); got != 0 {
		t.Errorf("LastMessageSeq of an empty conversation = %d, want 0", got)
	}
	msgs := f.transcript("conv")
	seq, err := f.AppendMessage(t.Context(), org, msgs[0])
	if err != nil {
		t.Fatalf("AppendMessage: %v", err)
	}
	if got := last(org, conv); got != seq {
		t.Errorf("after one append: %d, want %d", got, seq)
	}
	all := f.appendAll(t, org, msgs[1:])
	if got, want := last(org, conv), all[len(all)-1].Seq; got != want {
		t.Errorf("after a batch: %d, want %d", got, want)
	}
	if got := last(f.id("other-org"), conv); got != 0 {
		t.Errorf("another organisation sees %d, want 0", got)
	}
	if got := last(org, f.id("other-conv")); got != 0 {
		t.Errorf("another conversation sees %d, want 0", got)
	}
}

// testMessageScoped checks that a conversation's messages are listed only
// in its organisation and only under its own ID.
func testMessageScoped(t *testing.T, f *fixture) {
	org := f.id("org")
	f.appendAll(t, org, f.transcript("conv"))
	tests := []struct{ name, org, conv string }{
		{"OtherOrg", f.id("other-org"), f.id("conv")},
		{"OtherConversation", org, f.id("other-conv")},
		{"EmptyOrg", "", f.id("conv")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := f.list(t, tc.org, tc.conv, 0); len(got) != 0 {
				t.Errorf("ListMessages revealed %d messages: %+v", len(got), got)
			}
		})
	}
}

// testMessageConcurrentAppend appends from 8 goroutines at once and checks
// that no Seq repeats, each goroutine sees its own Seqs increase, and
// every message is listed once, in Seq order.
func testMessageConcurrentAppend(t *testing.T, f *fixture) {
	const writers, each = 8, 25
	org, conv := f.id("org"), f.id("conv")
	seqs := make([][]int64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() { seqs[w] = f.appendConcurrently(t, org, conv, w, each) })
	}
	wg.Wait()
	for w, s := range seqs {
		if len(s) != each || !strictlyIncreasing(s) {
			t.Errorf("writer %d: Seqs %v, want %d strictly increasing", w, s, each)
		}
	}
	got := f.list(t, org, conv, 0)
	if !strictlyIncreasing(seqsOf(got)) {
		t.Errorf("listed Seqs %v, want strictly increasing", seqsOf(got))
	}
	wantSeqs := slices.Sorted(slices.Values(slices.Concat(seqs...)))
	if d := diff(wantSeqs, seqsOf(got)); d != "" {
		t.Errorf("listed Seqs differ from assigned (-want +got):\n%s", d)
	}
	wantContent := contentsFor(writers, each)
	gotContent := make([]string, 0, len(got))
	for _, m := range got {
		gotContent = append(gotContent, m.Content)
	}
	slices.Sort(gotContent)
	if d := diff(wantContent, gotContent); d != "" {
		t.Errorf("messages lost or duplicated (-want +got):\n%s", d)
	}
}

// appendConcurrently appends n messages as writer w and returns their Seqs.
// It reports errors with t.Errorf, which is safe from any goroutine.
func (f *fixture) appendConcurrently(t *testing.T, org, conv string, w, n int) []int64 {
	var seqs []int64
	for i := range n {
		m := store.Message{ConversationID: conv, Role: "user", Content: content(w, i), CreatedAt: at(i)}
		seq, err := f.AppendMessage(t.Context(), org, m)
		if err != nil {
			t.Errorf("writer %d: AppendMessage %d: %v", w, i, err)
			return seqs
		}
		seqs = append(seqs, seq)
	}
	return seqs
}

// content names message i of writer w.
func content(w, i int) string { return fmt.Sprintf("w%02d-m%03d", w, i) }

// contentsFor returns every content appendConcurrently writes, sorted.
func contentsFor(writers, each int) []string {
	var all []string
	for w := range writers {
		for i := range each {
			all = append(all, content(w, i))
		}
	}
	slices.Sort(all)
	return all
}

// seqsOf returns the messages' Seqs in order.
func seqsOf(ms []store.Message) []int64 {
	s := make([]int64, 0, len(ms))
	for _, m := range ms {
		s = append(s, m.Seq)
	}
	return s
}

// strictlyIncreasing reports whether every element exceeds the one before.
func strictlyIncreasing(s []int64) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}
