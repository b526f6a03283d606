package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// attachmentCases checks the Attachments repository.
func attachmentCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testAttachmentRoundTrip},
		{"Invalid", testAttachmentInvalid},
		{"Quota", testAttachmentQuota},
		{"ConcurrentQuota", testAttachmentConcurrentQuota},
		{"Isolation", testAttachmentIsolation},
		{"Search", testAttachmentSearch},
		{"Delete", testAttachmentDelete},
		{"DeleteConversation", testAttachmentDeleteConversation},
	}
}

// newAttachment returns a ready attachment of conversation conv in the
// fixture's "org", its text cut into one chunk per paragraph with local
// vectors.
func (f *fixture) newAttachment(t testing.TB, conv, id, name, text string) store.NewAttachment {
	t.Helper()
	a := store.NewAttachment{
		Attachment: store.Attachment{OrgID: f.id("org"), ID: f.id(id), OwnerID: f.id("user"), ConversationID: f.id(conv),
			Name: name, MediaType: "text/plain; charset=utf-8", CreatedAt: at(5), Kind: "text",
			Status: store.AttachmentReady, Model: localModel},
		Data: []byte(text), Text: text,
	}
	for i, p := range strings.Split(text, "\n\n") {
		a.Chunks = append(a.Chunks, store.AttachmentChunk{Seq: i, Text: p, Vector: localVector(t, p)})
	}
	return a
}

func (f *fixture) putAttachment(t testing.TB, a store.NewAttachment) store.Attachment {
	t.Helper()
	got, err := f.PutAttachment(t.Context(), a, store.AttachmentQuota{})
	if err != nil {
		t.Fatalf("PutAttachment %s: %v", a.Name, err)
	}
	return got
}

// testAttachmentRoundTrip: what is put is got, listed, counted and read
// back byte for byte, its times in UTC.
func testAttachmentRoundTrip(t *testing.T, f *fixture) {
	ctx := t.Context()
	a := f.newAttachment(t, "conv", "a1", "notes.txt", "Hà Nội is the capital.\n\nThe river is red.")
	put := f.putAttachment(t, a)
	want := a.Attachment
	want.Size, want.Chars, want.NumChunks = int64(len(a.Data)), len([]rune(a.Text)), 2
	want.SHA256 = put.SHA256
	if d := diff(want, put); d != "" || len(put.SHA256) != 64 {
		t.Errorf("PutAttachment (-want +got):\n%s", d)
	}
	got, err := f.GetAttachment(ctx, a.OrgID, a.ConversationID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(put, got); d != "" {
		t.Errorf("GetAttachment (-want +got):\n%s", d)
	}
	wantUTC(t, "GetAttachment", got.CreatedAt)
	data, err := f.AttachmentData(ctx, a.OrgID, a.ConversationID, a.ID)
	if err != nil || !bytes.Equal(data, a.Data) {
		t.Errorf("AttachmentData = %q, %v", data, err)
	}
	text, err := f.AttachmentText(ctx, a.OrgID, a.ConversationID, a.ID)
	if err != nil || text != a.Text {
		t.Errorf("AttachmentText = %q, %v", text, err)
	}
	second := f.newAttachment(t, "conv", "a2", "b.txt", "second file")
	second.CreatedAt = at(6)
	f.putAttachment(t, second)
	list, err := f.ListAttachments(ctx, a.OrgID, a.ConversationID)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != second.ID {
		t.Errorf("ListAttachments = %+v, %v; want a1 then a2", list, err)
	}
	n, err := f.CountAttachments(ctx, a.OrgID, a.ConversationID)
	u, err2 := f.AttachmentUsage(ctx, a.OrgID, a.ConversationID)
	if n != 2 || err != nil || err2 != nil || u != (store.AttachmentUsage{Count: 2, Bytes: int64(len(a.Data) + len(second.Data))}) {
		t.Errorf("count %d (%v), usage %+v (%v)", n, err, u, err2)
	}
	vecs, err := f.AttachmentVectors(ctx, a.OrgID, a.ConversationID, localModel)
	if err != nil || len(vecs) != 3 || vecs[0].ID != store.ChunkRef(a.ID, 0) || !bytes.Equal(vecs[0].Vector, a.Chunks[0].Vector) {
		t.Errorf("AttachmentVectors = %d vectors, %v", len(vecs), err)
	}
	if v, _ := f.AttachmentVectors(ctx, a.OrgID, a.ConversationID, "other:model/3"); len(v) != 0 {
		t.Errorf("another model's vectors: %d", len(v))
	}
	refs := []string{store.ChunkRef(a.ID, 1), "nonsense", store.ChunkRef(a.ID, 9), store.ChunkRef(a.ID, 0)}
	hits, err := f.AttachmentChunks(ctx, a.OrgID, a.ConversationID, refs)
	if err != nil || len(hits) != 2 || hits[0].Text != "The river is red." || hits[1].Seq != 0 || hits[0].Name != "notes.txt" {
		t.Errorf("AttachmentChunks = %+v, %v", hits, err)
	}
	unreadable := f.newAttachment(t, "conv", "a3", "locked.pdf", "x")
	unreadable.Text, unreadable.Chunks, unreadable.Model, unreadable.Kind = "", nil, "", ""
	unreadable.Status, unreadable.Error = store.AttachmentUnreadable, `"locked.pdf" is an encrypted PDF`
	if got := f.putAttachment(t, unreadable); got.Status != store.AttachmentUnreadable || got.Error != unreadable.Error {
		t.Errorf("unreadable attachment stored as %+v", got)
	}
}

// testAttachmentInvalid: every invalid attachment is refused with its
// error and writes nothing.
func testAttachmentInvalid(t *testing.T, f *fixture) {
	base := f.newAttachment(t, "conv", "bad", "a.txt", "one\n\ntwo")
	cases := []struct {
		name   string
		change func(*store.NewAttachment)
		want   error
	}{
		{"TooLarge", func(a *store.NewAttachment) { a.Data = make([]byte, store.MaxAttachmentBytes+1) }, store.ErrAttachmentTooLarge},
		{"NoConversation", func(a *store.NewAttachment) { a.ConversationID = "" }, store.ErrAttachmentInvalid},
		{"SlashName", func(a *store.NewAttachment) { a.Name = "../a.txt" }, store.ErrAttachmentInvalid},
		{"BadStatus", func(a *store.NewAttachment) { a.Status = "maybe" }, store.ErrAttachmentInvalid},
		{"UnreadableWithText", func(a *store.NewAttachment) { a.Status, a.Error = store.AttachmentUnreadable, "no" }, store.ErrAttachmentInvalid},
		{"ChunkOutOfOrder", func(a *store.NewAttachment) { a.Chunks[1].Seq = 5 }, store.ErrAttachmentInvalid},
		{"EmptyChunk", func(a *store.NewAttachment) { a.Chunks[0].Text = " " }, store.ErrAttachmentInvalid},
		{"VectorWithoutModel", func(a *store.NewAttachment) { a.Model = "" }, store.ErrAttachmentInvalid},
		{"ModelWithoutVector", func(a *store.NewAttachment) { a.Chunks[1].Vector = nil }, store.ErrAttachmentInvalid},
		{"TextNotUTF8", func(a *store.NewAttachment) { a.Text = "\xff" }, store.ErrAttachmentInvalid},
		{"TooManyChunks", func(a *store.NewAttachment) {
			a.Model, a.Chunks = "", nil
			for i := range store.MaxAttachmentChunks + 1 {
				a.Chunks = append(a.Chunks, store.AttachmentChunk{Seq: i, Text: "x"})
			}
		}, store.ErrAttachmentInvalid},
	}
	for _, c := range cases {
		a := base
		a.Chunks = append([]store.AttachmentChunk(nil), base.Chunks...)
		c.change(&a)
		if _, err := f.PutAttachment(t.Context(), a, store.AttachmentQuota{}); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if n, err := f.CountAttachments(t.Context(), base.OrgID, base.ConversationID); n != 0 || err != nil {
		t.Errorf("after refused puts the conversation holds %d (%v)", n, err)
	}
	if _, err := f.GetBlob(t.Context(), base.OrgID, base.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused put left its blob: %v", err)
	}
}

// testAttachmentQuota: the per-file, count and bytes limits refuse a
// put before it writes, and a taken ID is ErrExists.
func testAttachmentQuota(t *testing.T, f *fixture) {
	ctx := t.Context()
	q := store.AttachmentQuota{MaxFileBytes: 10, MaxCount: 2, MaxBytes: 15}
	put := func(id, text string) error {
		_, err := f.PutAttachment(ctx, f.newAttachment(t, "conv", id, id+".txt", text), q)
		return err
	}
	if err := put("big", "eleven byte"); !errors.Is(err, store.ErrAttachmentTooLarge) {
		t.Errorf("a file over the per-file limit: %v", err)
	}
	if err := put("a", "12345678"); err != nil {
		t.Fatal(err)
	}
	if err := put("a", "1"); !errors.Is(err, store.ErrExists) {
		t.Errorf("a taken ID: %v", err)
	}
	if err := put("b", "12345678"); !errors.Is(err, store.ErrAttachmentQuota) || !strings.Contains(err.Error(), "15 bytes") {
		t.Errorf("past the bytes limit: %v", err)
	}
	if err := put("c", "1234567"); err != nil {
		t.Fatal(err)
	}
	if err := put("d", "1"); !errors.Is(err, store.ErrAttachmentQuota) || !strings.Contains(err.Error(), "2 files") {
		t.Errorf("past the count limit: %v", err)
	}
	if u, _ := f.AttachmentUsage(ctx, f.id("org"), f.id("conv")); u != (store.AttachmentUsage{Count: 2, Bytes: 15}) {
		t.Errorf("usage %+v after refusals", u)
	}
	// Another conversation has a quota of its own.
	if _, err := f.PutAttachment(ctx, f.newAttachment(t, "conv2", "e", "e.txt", "1"), q); err != nil {
		t.Errorf("another conversation: %v", err)
	}
}

// testAttachmentConcurrentQuota: concurrent puts never take a
// conversation past its count.
func testAttachmentConcurrentQuota(t *testing.T, f *fixture) {
	q := store.AttachmentQuota{MaxCount: 3}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = f.PutAttachment(t.Context(), f.newAttachment(t, "conv", fmt.Sprint("c", i), "f.txt", "text"), q)
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrAttachmentQuota):
			t.Errorf("put: %v", err)
		}
	}
	if n, _ := f.CountAttachments(t.Context(), f.id("org"), f.id("conv")); ok != 3 || n != 3 {
		t.Errorf("%d puts succeeded, %d stored; want 3", ok, n)
	}
}

// testAttachmentIsolation: another conversation, or the same
// conversation ID in another organisation, reaches nothing.
func testAttachmentIsolation(t *testing.T, f *fixture) {
	ctx := t.Context()
	a := f.putAttachment(t, f.newAttachment(t, "mine", "a", "secret.txt", "the secret plan"))
	other := f.sub("other")
	twin := other.newAttachment(t, "x", "b", "twin.txt", "the secret twin")
	twin.ConversationID = a.ConversationID // same conversation ID, other organisation
	other.putAttachment(t, twin)
	for _, c := range []struct{ org, conv string }{{a.OrgID, f.id("theirs")}, {other.id("org"), a.ConversationID}} {
		if c.org != a.OrgID {
			// The twin is there; a's ID is not.
			_, err := f.GetAttachment(ctx, c.org, c.conv, a.ID)
			wantNotFound(t, "GetAttachment in another organisation", err)
			continue
		}
		_, err := f.GetAttachment(ctx, c.org, c.conv, a.ID)
		wantNotFound(t, "GetAttachment from another conversation", err)
		_, err = f.AttachmentData(ctx, c.org, c.conv, a.ID)
		wantNotFound(t, "AttachmentData from another conversation", err)
		_, err = f.AttachmentText(ctx, c.org, c.conv, a.ID)
		wantNotFound(t, "AttachmentText from another conversation", err)
		wantNotFound(t, "DeleteAttachment from another conversation", f.DeleteAttachment(ctx, c.org, c.conv, a.ID))
		if l, _ := f.ListAttachments(ctx, c.org, c.conv); len(l) != 0 {
			t.Errorf("another conversation lists %d", len(l))
		}
		if h, _ := f.SearchAttachments(ctx, store.AttachmentSearch{OrgID: c.org, ConversationID: c.conv, Text: "secret"}); len(h) != 0 {
			t.Errorf("another conversation's search finds %+v", h)
		}
		if v, _ := f.AttachmentVectors(ctx, c.org, c.conv, localModel); len(v) != 0 {
			t.Errorf("another conversation's vectors: %d", len(v))
		}
		if h, _ := f.AttachmentChunks(ctx, c.org, c.conv, []string{store.ChunkRef(a.ID, 0)}); len(h) != 0 {
			t.Errorf("another conversation's chunks: %+v", h)
		}
	}
	hits, err := f.SearchAttachments(ctx, store.AttachmentSearch{OrgID: a.OrgID, ConversationID: a.ConversationID, Text: "secret"})
	if err != nil || len(hits) != 1 || hits[0].AttachmentID != a.ID {
		t.Errorf("own search = %+v, %v; want a alone (not the other organisation's twin)", hits, err)
	}
}

// testAttachmentSearch: full-text search folds case and diacritics,
// ranks the better chunk first, honours the limit and reads any text as
// words.
func testAttachmentSearch(t *testing.T, f *fixture) {
	ctx := t.Context()
	f.putAttachment(t, f.newAttachment(t, "conv", "a", "city.md",
		"Hà Nội is the capital of Việt Nam.\n\nThe harbour city trades rice.\n\nHà Nội, Hà Nội: old quarter of Hà Nội."))
	s := store.AttachmentSearch{OrgID: f.id("org"), ConversationID: f.id("conv"), Text: "ha noi"}
	hits, err := f.SearchAttachments(ctx, s)
	if err != nil || len(hits) != 2 || hits[0].Seq != 2 {
		t.Errorf("search %q = %+v, %v; want chunk 2 then 0", s.Text, hits, err)
	}
	s.Limit = 1
	if hits, _ := f.SearchAttachments(ctx, s); len(hits) != 1 {
		t.Errorf("limit 1: %d hits", len(hits))
	}
	for _, q := range []string{`"`, `NEAR(a b)`, `ha* OR -x`, `' | !`, strings.Repeat("x", 3000)} {
		if _, err := f.SearchAttachments(ctx, store.AttachmentSearch{OrgID: s.OrgID, ConversationID: s.ConversationID, Text: q}); err != nil &&
			!errors.Is(err, store.ErrMemoryInvalid) {
			t.Errorf("search %.20q: %v", q, err)
		}
	}
}

// testAttachmentDelete: a deleted attachment is gone from every read,
// its blob too, and the other attachment stays.
func testAttachmentDelete(t *testing.T, f *fixture) {
	ctx := t.Context()
	a := f.putAttachment(t, f.newAttachment(t, "conv", "a", "a.txt", "alpha words"))
	b := f.putAttachment(t, f.newAttachment(t, "conv", "b", "b.txt", "alpha beta"))
	if err := f.DeleteAttachment(ctx, a.OrgID, a.ConversationID, a.ID); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "second delete", f.DeleteAttachment(ctx, a.OrgID, a.ConversationID, a.ID))
	_, err := f.GetAttachment(ctx, a.OrgID, a.ConversationID, a.ID)
	wantNotFound(t, "GetAttachment after delete", err)
	_, err = f.GetBlob(ctx, a.OrgID, a.ID)
	wantNotFound(t, "GetBlob after delete", err)
	hits, _ := f.SearchAttachments(ctx, store.AttachmentSearch{OrgID: a.OrgID, ConversationID: a.ConversationID, Text: "alpha"})
	if len(hits) != 1 || hits[0].AttachmentID != b.ID {
		t.Errorf("search after delete: %+v", hits)
	}
	if v, _ := f.AttachmentVectors(ctx, a.OrgID, a.ConversationID, localModel); len(v) != 1 {
		t.Errorf("%d vectors after delete, want b's one", len(v))
	}
}

// testAttachmentDeleteConversation: deleting the conversation deletes
// its attachments, chunks and search rows, and no other conversation's.
func testAttachmentDeleteConversation(t *testing.T, f *fixture) {
	ctx := t.Context()
	org, user := f.id("org"), f.id("user")
	gone := SeedConversation(t, f.Store, org, user, f.id("gone"), f.id("g"))
	kept := SeedConversation(t, f.Store, org, user, f.id("kept"), f.id("k"))
	if err := f.DeleteConversation(ctx, org, user, gone.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	_, err := f.GetAttachment(ctx, org, gone.Conversation.ID, gone.AttachmentID)
	wantNotFound(t, "the deleted conversation's attachment", err)
	if n, _ := f.CountAttachments(ctx, org, gone.Conversation.ID); n != 0 {
		t.Errorf("the deleted conversation counts %d", n)
	}
	if _, err := f.GetAttachment(ctx, org, kept.Conversation.ID, kept.AttachmentID); err != nil {
		t.Errorf("the kept conversation's attachment: %v", err)
	}
	// A new conversation of the same ID starts empty, its search too.
	SeedConversation(t, f.Store, org, user, gone.Conversation.ID, f.id("g2"))
	hits, _ := f.SearchAttachments(ctx, store.AttachmentSearch{OrgID: org, ConversationID: gone.Conversation.ID, Text: "attached report"})
	if len(hits) != 1 || hits[0].AttachmentID != "att-"+f.id("g2") {
		t.Errorf("search in the reused conversation: %+v", hits)
	}
}
