package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// TestArtifacts: a conversation's artifacts are listed, read with their
// versions, served as sandboxed documents and deleted by their owner; a
// draft's content is never shown; another user of the organisation and
// another organisation reach none of it.
func TestArtifacts(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) {})
	st := f.st
	f.must(st.PutConversation(f.ctx, store.Conversation{ID: "conv_1", OrgID: "org_a", UserID: "bob", Agent: "helper", CreatedAt: start, UpdatedAt: start}))
	page := `<h1>Launch plan</h1><script>document.title = "x"</script>`
	a, err := st.CreateArtifact(f.ctx, store.NewArtifact{Artifact: store.Artifact{OrgID: "org_a", ID: "art_1", OwnerID: "bob",
		ConversationID: "conv_1", Title: "Launch / plan", Kind: store.ArtifactHTML, Content: page, CreatedAt: start}}, store.ArtifactQuota{})
	f.must(err)
	_, err = st.ChangeArtifact(f.ctx, store.ArtifactChange{OrgID: "org_a", ConversationID: "conv_1", ID: "art_1",
		Change: store.ArtifactRewrite, Content: "<h1>SECRET DRAFT</h1>", AsDraft: true, Base: a.Base(), At: start}, store.ArtifactQuota{})
	f.must(err)

	var list struct{ Artifacts []httpapi.Artifact }
	f.ok(f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/artifacts", nil), http.StatusOK, &list)
	if len(list.Artifacts) != 1 || list.Artifacts[0].Version != 1 || list.Artifacts[0].Draft == nil || list.Artifacts[0].Draft.Inspected {
		t.Fatalf("list %+v, want the artifact at version 1 with an uninspected draft", list)
	}
	var got httpapi.Artifact
	r := f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/artifacts/art_1", nil)
	f.ok(r, http.StatusOK, &got)
	if got.Content == nil || *got.Content != page || len(got.Versions) != 1 || strings.Contains(string(r.body), "SECRET DRAFT") {
		t.Errorf("get: %s, want version 1's content and history, never the draft's", r.body)
	}
	var v httpapi.ArtifactVer
	f.ok(f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/artifacts/art_1/versions/1", nil), http.StatusOK, &v)
	if v.Content == nil || *v.Content != page || v.Change != "create" {
		t.Errorf("version 1: %+v", v)
	}
	wantError(t, f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/artifacts/art_1/versions/2", nil), http.StatusNotFound, "not_found")

	c := f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/artifacts/art_1/content", nil)
	csp := c.Header.Get("Content-Security-Policy")
	if c.StatusCode != http.StatusOK || string(c.body) != page || !strings.HasPrefix(c.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(csp, "sandbox allow-scripts") || strings.Contains(csp, "allow-same-origin") || !strings.Contains(csp, "default-src 'none'") ||
		c.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("content: %d %q, type %q, CSP %q", c.StatusCode, c.body, c.Header.Get("Content-Type"), csp)
	}
	dl := f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/artifacts/art_1/content?download=true", nil)
	if d := dl.Header.Get("Content-Disposition"); !strings.HasPrefix(d, "attachment") || !strings.Contains(d, `filename="Launch - plan.html"`) {
		t.Errorf("download disposition %q", d)
	}

	for _, who := range []*who{f.carol, f.dave} {
		for _, p := range []string{"", "/art_1", "/art_1/versions/1", "/art_1/content"} {
			r := f.do(who, http.MethodGet, "/api/conversations/conv_1/artifacts"+p, nil)
			if r.StatusCode != http.StatusNotFound || strings.Contains(string(r.body), "Launch") {
				t.Errorf("another user: GET %s = %d %s", p, r.StatusCode, r.body)
			}
		}
		if r := f.do(who, http.MethodDelete, "/api/conversations/conv_1/artifacts/art_1", nil); r.StatusCode != http.StatusNotFound {
			t.Errorf("another user's delete: %d", r.StatusCode)
		}
	}
	if r := f.do(f.bob, http.MethodDelete, "/api/conversations/conv_1/artifacts/art_1", nil); r.StatusCode != http.StatusNoContent {
		t.Errorf("delete: %d %s", r.StatusCode, r.body)
	}
	wantError(t, f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/artifacts/art_1", nil), http.StatusNotFound, "not_found")
	if u, _ := st.ArtifactUsage(f.ctx, "org_a", "conv_1"); u.Count != 0 || u.Bytes != 0 {
		t.Errorf("usage after the delete: %+v", u)
	}
}

// TestArtifactDraftOnlyHasNoContent: an artifact whose first draft was
// never saved is listed, but has no content to serve.
func TestArtifactDraftOnlyHasNoContent(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) {})
	f.must(f.st.PutConversation(f.ctx, store.Conversation{ID: "conv_1", OrgID: "org_a", UserID: "bob", Agent: "helper", CreatedAt: start, UpdatedAt: start}))
	_, err := f.st.CreateArtifact(f.ctx, store.NewArtifact{Artifact: store.Artifact{OrgID: "org_a", ID: "art_1", OwnerID: "bob",
		ConversationID: "conv_1", Title: "Draft", Kind: store.ArtifactSVG, Content: "<svg/>", CreatedAt: start}, AsDraft: true}, store.ArtifactQuota{})
	f.must(err)
	var got httpapi.Artifact
	f.ok(f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/artifacts/art_1", nil), http.StatusOK, &got)
	if got.Version != 0 || got.Content != nil || got.Draft == nil {
		t.Errorf("a draft-only artifact: %+v", got)
	}
	wantError(t, f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/artifacts/art_1/content", nil), http.StatusNotFound, "not_found")
}
