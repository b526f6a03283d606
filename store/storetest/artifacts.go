package storetest

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// artifactCases checks the Artifacts repository.
func artifactCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testArtifactRoundTrip},
		{"Drafts", testArtifactDrafts},
		{"Conflict", testArtifactConflict},
		{"Invalid", testArtifactInvalid},
		{"Quota", testArtifactQuota},
		{"Versions", testArtifactVersions},
		{"ConcurrentQuota", testArtifactConcurrentQuota},
		{"Isolation", testArtifactIsolation},
		{"Delete", testArtifactDelete},
	}
}

func (f *fixture) newArtifact(conv, id, kind, content string) store.NewArtifact {
	return store.NewArtifact{Artifact: store.Artifact{OrgID: f.id("org"), ID: f.id(id), OwnerID: f.id("user"),
		ConversationID: f.id(conv), Title: "  The   plan\n", Kind: kind, Content: content, CreatedAt: at(1)}, TurnID: "t1"}
}

func (f *fixture) createArtifact(t *testing.T, a store.NewArtifact) store.Artifact {
	t.Helper()
	got, err := f.CreateArtifact(t.Context(), a, store.ArtifactQuota{})
	if err != nil {
		t.Fatalf("CreateArtifact %s: %v", a.ID, err)
	}
	return got
}

func (f *fixture) changeArtifact(t *testing.T, a store.Artifact, change, content, patch string, draft bool, minute int) store.Artifact {
	t.Helper()
	got, err := f.ChangeArtifact(t.Context(), store.ArtifactChange{OrgID: a.OrgID, ConversationID: a.ConversationID, ID: a.ID,
		Change: change, Content: content, Patch: patch, AsDraft: draft, Base: a.Base(), TurnID: "t2", At: at(minute)}, store.ArtifactQuota{})
	if err != nil {
		t.Fatalf("ChangeArtifact %s %s: %v", a.ID, change, err)
	}
	return got
}

// testArtifactRoundTrip: a created artifact is got with its content, in
// UTC with its title cleaned; a rewrite and an update each add a
// version, the update keeping its patch; every version reads back byte
// for byte.
func testArtifactRoundTrip(t *testing.T, f *fixture) {
	ctx := t.Context()
	a := f.createArtifact(t, f.newArtifact("conv", "a1", store.ArtifactMarkdown, "# Plan\n\nHà Nội first."))
	if a.Version != 1 || a.Title != "The plan" || a.Draft != nil {
		t.Fatalf("created: %+v, want version 1 titled %q without a draft", a, "The plan")
	}
	got, err := f.GetArtifact(ctx, a.OrgID, a.ConversationID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantUTC(t, "artifact", got.CreatedAt, got.UpdatedAt)
	if d := diff(a, got); d != "" {
		t.Errorf("GetArtifact (-created +got):\n%s", d)
	}
	b := f.changeArtifact(t, got, store.ArtifactRewrite, "# Plan\n\nHuế first.", "", false, 2)
	c := f.changeArtifact(t, b, store.ArtifactUpdate, "# Plan\n\nHuế, then Hội An.", `[{"old":"Huế first.","new":"Huế, then Hội An."}]`, false, 3)
	if c.Version != 3 || c.Content != "# Plan\n\nHuế, then Hội An." || !c.UpdatedAt.Equal(at(3)) {
		t.Errorf("after two changes: %+v, want version 3 with the update's content at minute 3", c)
	}
	vs, err := f.ListArtifactVersions(ctx, a.OrgID, a.ConversationID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, v := range vs {
		changes = append(changes, v.Change)
		if v.Content != "" {
			t.Errorf("ListArtifactVersions returns content of version %d", v.Version)
		}
	}
	if d := diff([]string{"create", "rewrite", "update"}, changes); d != "" {
		t.Errorf("versions' changes (-want +got):\n%s", d)
	}
	v1, err := f.GetArtifactVersion(ctx, a.OrgID, a.ConversationID, a.ID, 1)
	if err != nil || v1.Content != "# Plan\n\nHà Nội first." || v1.Size != len(v1.Content) || v1.TurnID != "t1" {
		t.Errorf("version 1: %+v, %v", v1, err)
	}
	v3, err := f.GetArtifactVersion(ctx, a.OrgID, a.ConversationID, a.ID, 3)
	if err != nil || !strings.Contains(v3.Patch, "Hội An") || v3.Checked {
		t.Errorf("version 3: %+v, %v; want the patch kept, not checked", v3, err)
	}
	wantNotFound(t, "version 4", func() error {
		_, err := f.GetArtifactVersion(ctx, a.OrgID, a.ConversationID, a.ID, 4)
		return err
	}())
	list, err := f.ListArtifacts(ctx, a.OrgID, a.ConversationID)
	if err != nil || len(list) != 1 || list[0].Content != "" || list[0].Version != 3 {
		t.Errorf("ListArtifacts: %+v, %v; want the one artifact at version 3 without content", list, err)
	}
	u, err := f.ArtifactUsage(ctx, a.OrgID, a.ConversationID)
	want := store.ArtifactBytes(v1.Content, "") + store.ArtifactBytes(b.Content, "") + store.ArtifactBytes(c.Content, v3.Patch)
	if err != nil || u.Count != 1 || u.Bytes != want {
		t.Errorf("ArtifactUsage: %+v, %v; want 1 artifact of %d bytes", u, err, want)
	}
}

// testArtifactDrafts: a visual artifact's draft saves only when the Rev
// inspected is its newest; an inspection of an older Rev is a conflict;
// saving makes a checked version with the draft's title and drops it.
func testArtifactDrafts(t *testing.T, f *fixture) {
	ctx := t.Context()
	n := f.newArtifact("conv", "deck", store.ArtifactHTML, "<h1>One</h1>")
	n.AsDraft = true
	a := f.createArtifact(t, n)
	if a.Version != 0 || a.Draft == nil || a.Draft.Rev != 1 || a.Draft.Inspected() || a.Draft.Content != "<h1>One</h1>" {
		t.Fatalf("created as a draft: %+v (draft %+v)", a, a.Draft)
	}
	org, conv := a.OrgID, a.ConversationID
	if _, err := f.SaveArtifactDraft(ctx, org, conv, a.ID, "t1", at(2)); !errors.Is(err, store.ErrArtifactNotInspected) {
		t.Fatalf("save before an inspection: %v, want ErrArtifactNotInspected", err)
	}
	if err := f.MarkArtifactInspected(ctx, org, conv, a.ID, 1); err != nil {
		t.Fatal(err)
	}
	b := f.changeArtifact(t, a, store.ArtifactUpdate, "<h1>One!</h1>", `[{"old":"One","new":"One!"}]`, true, 3)
	if b.Draft.Rev != 2 || b.Draft.Inspected() || b.Draft.Change != store.ArtifactCreate {
		t.Fatalf("changed draft: %+v, want Rev 2, not inspected, still the create", b.Draft)
	}
	if _, err := f.SaveArtifactDraft(ctx, org, conv, a.ID, "t1", at(4)); !errors.Is(err, store.ErrArtifactNotInspected) {
		t.Errorf("save after a change: %v, want ErrArtifactNotInspected", err)
	}
	if err := f.MarkArtifactInspected(ctx, org, conv, a.ID, 1); !errors.Is(err, store.ErrConflict) {
		t.Errorf("marking the older Rev: %v, want ErrConflict", err)
	}
	if err := f.MarkArtifactInspected(ctx, org, conv, a.ID, 2); err != nil {
		t.Fatal(err)
	}
	saved, err := f.SaveArtifactDraft(ctx, org, conv, a.ID, "t9", at(5))
	if err != nil {
		t.Fatal(err)
	}
	if saved.Version != 1 || saved.Draft != nil || saved.Content != "<h1>One!</h1>" {
		t.Errorf("saved: %+v, want version 1 with the draft's content, no draft", saved)
	}
	v, err := f.GetArtifactVersion(ctx, org, conv, a.ID, 1)
	if err != nil || !v.Checked || v.TurnID != "t9" || v.Change != store.ArtifactCreate {
		t.Errorf("saved version: %+v, %v; want checked, of t9, a create", v, err)
	}
	if _, err := f.SaveArtifactDraft(ctx, org, conv, a.ID, "t1", at(6)); !errors.Is(err, store.ErrArtifactNoDraft) {
		t.Errorf("save without a draft: %v, want ErrArtifactNoDraft", err)
	}
	if err := f.MarkArtifactInspected(ctx, org, conv, a.ID, 2); !errors.Is(err, store.ErrArtifactNoDraft) {
		t.Errorf("mark without a draft: %v, want ErrArtifactNoDraft", err)
	}
	// A new draft takes the next Rev, never an inspected one again.
	c := f.changeArtifact(t, saved, store.ArtifactRewrite, "<h1>Two</h1>", "", true, 7)
	if c.Draft.Rev != 3 || c.Draft.Inspected() || c.Version != 1 || c.Content != "<h1>One!</h1>" {
		t.Errorf("second draft: %+v (draft %+v), want Rev 3, not inspected, version 1 unchanged", c, c.Draft)
	}
	// A change that is not a draft drops the draft.
	d := f.changeArtifact(t, c, store.ArtifactRewrite, "<h1>Three</h1>", "", false, 8)
	if d.Draft != nil || d.Version != 2 {
		t.Errorf("a saved change over a draft: %+v, want version 2 and no draft", d)
	}
}

// testArtifactConflict: a change whose base is no longer the stored
// state is refused and changes nothing.
func testArtifactConflict(t *testing.T, f *fixture) {
	ctx := t.Context()
	a := f.createArtifact(t, f.newArtifact("conv", "a", store.ArtifactCSV, "a,b\n1,2\n"))
	b := f.changeArtifact(t, a, store.ArtifactRewrite, "a,b\n3,4\n", "", false, 2)
	_, err := f.ChangeArtifact(ctx, store.ArtifactChange{OrgID: a.OrgID, ConversationID: a.ConversationID, ID: a.ID,
		Change: store.ArtifactRewrite, Content: "a,b\n5,6\n", Base: a.Base(), At: at(3)}, store.ArtifactQuota{})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("a change from version 1 over version 2: %v, want ErrConflict", err)
	}
	got, _ := f.GetArtifact(ctx, a.OrgID, a.ConversationID, a.ID)
	if got.Version != 2 || got.Content != b.Content {
		t.Errorf("after the refused change: %+v, want version 2 as it was", got)
	}
}

// testArtifactInvalid: each rule refuses before anything is written.
func testArtifactInvalid(t *testing.T, f *fixture) {
	ctx := t.Context()
	big := strings.Repeat("x", store.MaxArtifactBytes+1)
	for _, tc := range []struct {
		name string
		edit func(*store.NewArtifact)
		want error
	}{
		{"unknown kind", func(a *store.NewArtifact) { a.Kind = "pptx" }, store.ErrArtifactInvalid},
		{"empty content", func(a *store.NewArtifact) { a.Content = " \n " }, store.ErrArtifactInvalid},
		{"content over the bound", func(a *store.NewArtifact) { a.Content = big }, store.ErrArtifactQuota},
		{"a NUL", func(a *store.NewArtifact) { a.Content = "a\x00b" }, store.ErrArtifactInvalid},
		{"invalid UTF-8", func(a *store.NewArtifact) { a.Content = "a\xffb" }, store.ErrArtifactInvalid},
		{"no title", func(a *store.NewArtifact) { a.Title = "\n" }, store.ErrArtifactInvalid},
		{"long title", func(a *store.NewArtifact) { a.Title = strings.Repeat("t", store.MaxArtifactTitleBytes+1) }, store.ErrArtifactInvalid},
		{"language on markdown", func(a *store.NewArtifact) { a.Language = "go" }, store.ErrArtifactInvalid},
		{"bad language", func(a *store.NewArtifact) { a.Kind, a.Language = store.ArtifactCode, "Go Lang" }, store.ErrArtifactInvalid},
		{"draft of markdown", func(a *store.NewArtifact) { a.AsDraft = true }, store.ErrArtifactInvalid},
		{"no conversation", func(a *store.NewArtifact) { a.ConversationID = "" }, store.ErrArtifactInvalid},
		{"no time", func(a *store.NewArtifact) { a.CreatedAt = time.Time{} }, store.ErrArtifactInvalid},
	} {
		a := f.newArtifact("conv", "a", store.ArtifactMarkdown, "# ok")
		tc.edit(&a)
		if _, err := f.CreateArtifact(ctx, a, store.ArtifactQuota{}); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if list, err := f.ListArtifacts(ctx, f.id("org"), f.id("conv")); err != nil || len(list) != 0 {
		t.Fatalf("after refused creates: %+v, %v; want none", list, err)
	}
	a := f.createArtifact(t, f.newArtifact("conv", "a", store.ArtifactMarkdown, "# ok"))
	for name, c := range map[string]store.ArtifactChange{
		"a rewrite with a patch": {Change: store.ArtifactRewrite, Patch: "p", Content: "x"},
		"an unknown change":      {Change: "append", Content: "x"},
		"a draft of markdown":    {Change: store.ArtifactRewrite, Content: "x", AsDraft: true},
		"empty content":          {Change: store.ArtifactRewrite, Content: ""},
		"content over the bound": {Change: store.ArtifactRewrite, Content: big},
		"a patch over the bound": {Change: store.ArtifactUpdate, Content: "x", Patch: strings.Repeat("p", store.MaxArtifactPatchBytes+1)},
	} {
		c.OrgID, c.ConversationID, c.ID, c.Base, c.At = a.OrgID, a.ConversationID, a.ID, a.Base(), at(2)
		if _, err := f.ChangeArtifact(ctx, c, store.ArtifactQuota{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	got, err := f.GetArtifact(ctx, a.OrgID, a.ConversationID, a.ID)
	if err != nil || got.Version != 1 || got.Content != "# ok" {
		t.Errorf("after refused changes: %+v, %v; want version 1 as created", got, err)
	}
}

// testArtifactQuota: a conversation past its count or bytes refuses the
// create or change that would take it there, writing nothing.
func testArtifactQuota(t *testing.T, f *fixture) {
	ctx := t.Context()
	q := store.ArtifactQuota{MaxCount: 2, MaxBytes: 100}
	for i, id := range []string{"a", "b"} {
		if _, err := f.CreateArtifact(ctx, f.newArtifact("conv", id, store.ArtifactMarkdown, strings.Repeat("m", 20+i)), q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.CreateArtifact(ctx, f.newArtifact("conv", "c", store.ArtifactMarkdown, "m"), q); !errors.Is(err, store.ErrArtifactQuota) {
		t.Errorf("a third artifact of at most 2: %v, want ErrArtifactQuota", err)
	}
	a, _ := f.GetArtifact(ctx, f.id("org"), f.id("conv"), f.id("a"))
	_, err := f.ChangeArtifact(ctx, store.ArtifactChange{OrgID: a.OrgID, ConversationID: a.ConversationID, ID: a.ID,
		Change: store.ArtifactRewrite, Content: strings.Repeat("n", 60), Base: a.Base(), At: at(2)}, q)
	if !errors.Is(err, store.ErrArtifactQuota) {
		t.Errorf("a change past 100 bytes: %v, want ErrArtifactQuota", err)
	}
	u, err := f.ArtifactUsage(ctx, a.OrgID, a.ConversationID)
	if err != nil || u.Count != 2 || u.Bytes != 41 {
		t.Errorf("usage after refusals: %+v, %v; want 2 artifacts of 41 bytes", u, err)
	}
	// Another conversation has quota of its own.
	if _, err := f.CreateArtifact(ctx, f.newArtifact("conv2", "c", store.ArtifactMarkdown, "m"), q); err != nil {
		t.Errorf("another conversation: %v", err)
	}
}

// testArtifactVersions: an artifact keeps at most MaxArtifactVersions
// versions; the change past them is refused and the draft save too.
func testArtifactVersions(t *testing.T, f *fixture) {
	ctx := t.Context()
	n := f.newArtifact("conv", "svg", store.ArtifactSVG, "<svg/>")
	a := f.createArtifact(t, n)
	for i := 2; i <= store.MaxArtifactVersions; i++ {
		a = f.changeArtifact(t, a, store.ArtifactRewrite, "<svg id=\"v"+string(rune('a'+i%26))+"\"/>", "", false, 2)
	}
	if a.Version != store.MaxArtifactVersions {
		t.Fatalf("version %d, want %d", a.Version, store.MaxArtifactVersions)
	}
	_, err := f.ChangeArtifact(ctx, store.ArtifactChange{OrgID: a.OrgID, ConversationID: a.ConversationID, ID: a.ID,
		Change: store.ArtifactRewrite, Content: "<svg/>", Base: a.Base(), At: at(3)}, store.ArtifactQuota{})
	if !errors.Is(err, store.ErrArtifactQuota) {
		t.Errorf("version %d: %v, want ErrArtifactQuota", store.MaxArtifactVersions+1, err)
	}
	d := f.changeArtifact(t, a, store.ArtifactRewrite, "<svg/>", "", true, 4)
	if err := f.MarkArtifactInspected(ctx, a.OrgID, a.ConversationID, a.ID, d.Draft.Rev); err != nil {
		t.Fatal(err)
	}
	if _, err := f.SaveArtifactDraft(ctx, a.OrgID, a.ConversationID, a.ID, "t", at(5)); !errors.Is(err, store.ErrArtifactQuota) {
		t.Errorf("saving a draft past the versions: %v, want ErrArtifactQuota", err)
	}
}

// testArtifactConcurrentQuota: concurrent creates never take a
// conversation past its count.
func testArtifactConcurrentQuota(t *testing.T, f *fixture) {
	q := store.ArtifactQuota{MaxCount: 3}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.CreateArtifact(t.Context(), f.newArtifact("conv", "c"+string(rune('0'+i)), store.ArtifactMarkdown, "x"), q)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrArtifactQuota) || errors.Is(err, store.ErrBusy):
				refused++
			default:
				t.Errorf("create: %v", err)
			}
		}()
	}
	wg.Wait()
	list, err := f.ListArtifacts(t.Context(), f.id("org"), f.id("conv"))
	if err != nil || len(list) != ok || ok > 3 || ok+refused != 8 {
		t.Errorf("%d created, %d refused, %d listed (%v); want at most 3, listed as created", ok, refused, len(list), err)
	}
}

// testArtifactIsolation: another conversation or organisation finds
// nothing, changes nothing and deletes nothing.
func testArtifactIsolation(t *testing.T, f *fixture) {
	ctx := t.Context()
	a := f.createArtifact(t, f.newArtifact("conv", "a", store.ArtifactMermaid, "graph TD; A-->B"))
	for _, sc := range []struct{ org, conv string }{{a.OrgID, f.id("other")}, {f.id("other-org"), a.ConversationID}} {
		_, err := f.GetArtifact(ctx, sc.org, sc.conv, a.ID)
		wantNotFound(t, "get", err)
		_, err = f.GetArtifactVersion(ctx, sc.org, sc.conv, a.ID, 1)
		wantNotFound(t, "get version", err)
		_, err = f.ListArtifactVersions(ctx, sc.org, sc.conv, a.ID)
		wantNotFound(t, "list versions", err)
		_, err = f.ChangeArtifact(ctx, store.ArtifactChange{OrgID: sc.org, ConversationID: sc.conv, ID: a.ID,
			Change: store.ArtifactRewrite, Content: "graph LR; X", Base: a.Base(), At: at(2)}, store.ArtifactQuota{})
		wantNotFound(t, "change", err)
		wantNotFound(t, "delete", f.DeleteArtifact(ctx, sc.org, sc.conv, a.ID))
		if list, err := f.ListArtifacts(ctx, sc.org, sc.conv); err != nil || len(list) != 0 {
			t.Errorf("list elsewhere: %+v, %v", list, err)
		}
	}
	if got, err := f.GetArtifact(ctx, a.OrgID, a.ConversationID, a.ID); err != nil || got.Version != 1 {
		t.Errorf("the artifact after attempts from elsewhere: %+v, %v", got, err)
	}
}

// testArtifactDelete: a deleted artifact and its versions are gone, and
// its bytes no longer count.
func testArtifactDelete(t *testing.T, f *fixture) {
	ctx := t.Context()
	a := f.createArtifact(t, f.newArtifact("conv", "a", store.ArtifactMarkdown, "one"))
	f.changeArtifact(t, a, store.ArtifactRewrite, "two", "", false, 2)
	keep := f.createArtifact(t, f.newArtifact("conv", "b", store.ArtifactMarkdown, "kept"))
	if err := f.DeleteArtifact(ctx, a.OrgID, a.ConversationID, a.ID); err != nil {
		t.Fatal(err)
	}
	_, err := f.GetArtifact(ctx, a.OrgID, a.ConversationID, a.ID)
	wantNotFound(t, "get after delete", err)
	_, err = f.GetArtifactVersion(ctx, a.OrgID, a.ConversationID, a.ID, 1)
	wantNotFound(t, "version after delete", err)
	wantNotFound(t, "delete again", f.DeleteArtifact(ctx, a.OrgID, a.ConversationID, a.ID))
	u, err := f.ArtifactUsage(ctx, a.OrgID, a.ConversationID)
	if err != nil || u.Count != 1 || u.Bytes != int64(len(keep.Content)) {
		t.Errorf("usage after the delete: %+v, %v; want the kept artifact only", u, err)
	}
}
