package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// memory stores a memory of owner ("" shared) in org, embedded by the
// local embedder, created a minute after the one before it by id order.
func (f *fixture) memory(org, owner, id, text string) {
	f.t.Helper()
	f.memoryAt(org, owner, id, text, start)
}

func (f *fixture) memoryAt(org, owner, id, text string, at time.Time) {
	f.t.Helper()
	vs, err := embed.Local{}.Embed(f.ctx, []string{text}, embed.Document)
	f.must(err)
	_, err = f.st.PutMemory(f.ctx, store.Memory{OrgID: org, ID: id, OwnerID: owner, Text: text, CreatedAt: at,
		Model: embed.Local{}.Model().String(), Vector: embed.Pack(vs[0])}, 0)
	f.must(err)
}

type memoryList struct {
	Memories   []httpapi.Memory
	NextCursor string `json:"next_cursor"`
}

func memoryIDs(l memoryList) []string {
	var ids []string
	for _, m := range l.Memories {
		ids = append(ids, m.ID)
	}
	return ids
}

// localModel names the local embedder's model as memories store it.
var localModel = embed.Local{}.Model().String()

// withLocalEmbeddings gives the server the local embedder.
func withLocalEmbeddings(c *httpapi.Config) { c.Embeddings = embed.Fixed{E: embed.Local{}} }

// TestListMemories: a person's own memories, newest first, in pages; an
// admin's shared list; a search keeps to its scope.
func TestListMemories(t *testing.T) {
	f := newFixture(t, nil)
	for i, id := range []string{"m1", "m2", "m3"} {
		f.memoryAt("org_a", "bob", id, "bob likes tea number "+id, start.Add(time.Duration(i)*time.Minute))
	}
	f.memory("org_a", "carol", "mc", "carol likes tea")
	f.memory("org_a", "", "ms", "the office serves tea")
	f.memory("org_b", "dave", "md", "dave likes tea")

	var l memoryList
	f.ok(f.do(f.bob, "GET", "/api/memories?limit=2", nil), http.StatusOK, &l)
	if diff := cmp.Diff([]string{"m3", "m2"}, memoryIDs(l)); diff != "" || l.NextCursor == "" {
		t.Fatalf("first page (-want +got):\n%s; cursor %q", diff, l.NextCursor)
	}
	if m := l.Memories[0]; m.Text != "bob likes tea number m3" || m.Shared || m.Model != localModel {
		t.Errorf("memory shown as %+v", m)
	}
	f.ok(f.do(f.bob, "GET", "/api/memories?limit=2&cursor="+l.NextCursor, nil), http.StatusOK, &l)
	if diff := cmp.Diff([]string{"m1"}, memoryIDs(l)); diff != "" || l.NextCursor != "" {
		t.Errorf("second page (-want +got):\n%s; cursor %q", diff, l.NextCursor)
	}
	wantError(t, f.do(f.bob, "GET", "/api/memories?cursor=bogus", nil), http.StatusBadRequest, "invalid_cursor")

	f.ok(f.do(f.bob, "GET", "/api/memories?q=tea", nil), http.StatusOK, &l)
	if got := memoryIDs(l); len(got) != 3 || strings.Contains(strings.Join(got, ","), "mc") || strings.Contains(strings.Join(got, ","), "ms") {
		t.Errorf("bob's search for tea finds %v, want his three alone", got)
	}
	f.ok(f.do(f.alice, "GET", "/api/memories?scope=shared", nil), http.StatusOK, &l)
	if diff := cmp.Diff([]string{"ms"}, memoryIDs(l)); diff != "" || !l.Memories[0].Shared {
		t.Errorf("shared list (-want +got):\n%s", diff)
	}
	f.ok(f.do(f.alice, "GET", "/api/memories?scope=shared&q=tea", nil), http.StatusOK, &l)
	if diff := cmp.Diff([]string{"ms"}, memoryIDs(l)); diff != "" {
		t.Errorf("shared search (-want +got):\n%s", diff)
	}
	wantError(t, f.do(f.bob, "GET", "/api/memories?scope=shared", nil), http.StatusForbidden, "forbidden")
	wantError(t, f.do(f.bob, "GET", "/api/memories?q="+strings.Repeat("a", 2001), nil), http.StatusBadRequest, "invalid_request")
	for _, w := range []*who{f.alice, f.dave} {
		f.ok(f.do(w, "GET", "/api/memories?q=tea", nil), http.StatusOK, &l)
		for _, m := range l.Memories {
			if strings.HasPrefix(m.Text, "bob") {
				t.Errorf("another person finds bob's memory %+v", m)
			}
		}
	}
}

// TestMemoriesArePrivate: another member, an admin of the organisation
// and one of another see bob's memory exactly as a missing one, and
// change nothing.
func TestMemoriesArePrivate(t *testing.T) {
	f := newFixture(t, withLocalEmbeddings)
	f.memory("org_a", "bob", "mem_bob", "bob drinks coffee")
	for _, w := range []*who{f.carol, f.alice, f.dave} {
		for _, ep := range []struct {
			method string
			body   any
		}{{"GET", nil}, {"PATCH", map[string]any{"text": "bob drinks tea"}}, {"DELETE", nil}} {
			r := f.do(w, ep.method, "/api/memories/mem_bob", ep.body)
			wantError(t, r, http.StatusNotFound, "not_found")
			missing := f.do(w, ep.method, "/api/memories/mem_none", ep.body)
			if string(r.body) != string(missing.body) {
				t.Errorf("%s: %s differs from a missing memory's %s", ep.method, r.body, missing.body)
			}
		}
	}
	m, err := f.st.GetMemory(f.ctx, "org_a", "bob", "mem_bob")
	if err != nil || m.Text != "bob drinks coffee" {
		t.Errorf("bob's memory after others' requests: %+v, %v", m, err)
	}
}

// TestUpdateMemory: the text is replaced and embedded again, so search
// finds the new words and the vector is the new text's.
func TestUpdateMemory(t *testing.T) {
	f := newFixture(t, withLocalEmbeddings)
	f.memory("org_a", "bob", "m1", "bob drinks coffee")
	f.clock.Advance(time.Hour)
	var got httpapi.Memory
	f.ok(f.do(f.bob, "PATCH", "/api/memories/m1", map[string]any{"text": "  bob drinks green tea\u0000 "}), http.StatusOK, &got)
	if got.Text != strings.TrimSpace(store.PlainText("bob drinks green tea\u0000")) || !got.UpdatedAt.Equal(start.Add(time.Hour)) || !got.CreatedAt.Equal(start) {
		t.Errorf("PATCH answered %+v", got)
	}
	m, err := f.st.GetMemory(f.ctx, "org_a", "bob", "m1")
	f.must(err)
	want, err := embed.Local{}.Embed(f.ctx, []string{m.Text}, embed.Document)
	f.must(err)
	if string(m.Vector) != string(embed.Pack(want[0])) || m.Model != localModel {
		t.Errorf("the stored vector is not the new text's (model %q)", m.Model)
	}
	hits, err := f.st.SearchMemories(f.ctx, store.MemorySearch{OrgID: "org_a", OwnerID: "bob", Text: "green"})
	if err != nil || len(hits) != 1 {
		t.Errorf("search for the new word: %+v, %v", hits, err)
	}
	if hits, _ := f.st.SearchMemories(f.ctx, store.MemorySearch{OrgID: "org_a", OwnerID: "bob", Text: "coffee"}); len(hits) != 0 {
		t.Errorf("search still finds the old word: %+v", hits)
	}

	// An admin edits a shared memory; a member cannot.
	f.memory("org_a", "", "ms", "the office is closed on Sundays")
	wantError(t, f.do(f.bob, "PATCH", "/api/memories/ms", map[string]any{"text": "open"}), http.StatusNotFound, "not_found")
	f.ok(f.do(f.alice, "PATCH", "/api/memories/ms", map[string]any{"text": "the office opens on Sundays"}), http.StatusOK, &got)
	if !got.Shared || got.Text != "the office opens on Sundays" {
		t.Errorf("shared PATCH answered %+v", got)
	}

	// Bad text: one clear error, nothing written.
	for name, body := range map[string]any{
		"blank":    map[string]any{"text": " \n\t "},
		"empty":    map[string]any{"text": ""},
		"too long": map[string]any{"text": strings.Repeat("é", store.MaxMemoryRunes+1)},
		"missing":  map[string]any{},
	} {
		r := f.do(f.bob, "PATCH", "/api/memories/m1", body)
		if r.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400; %s", name, r.StatusCode, r.body)
		}
	}
	wantError(t, f.do(f.bob, "PATCH", "/api/memories/m1", map[string]any{"text": " "}), http.StatusBadRequest, "invalid_memory")
	if m2, _ := f.st.GetMemory(f.ctx, "org_a", "bob", "m1"); m2.Text != m.Text || !m2.UpdatedAt.Equal(m.UpdatedAt) {
		t.Errorf("a refused edit changed the memory: %+v", m2)
	}
}

// failing is an embedder whose every call fails.
type failing struct{ embed.Local }

func (failing) Embed(context.Context, []string, embed.Kind) ([]embed.Vector, error) {
	return nil, errors.New("provider down: " + secretDetail)
}

// TestUpdateMemoryWithoutModel: with no embedding model, or one that
// fails, an edit is refused with its own code and the memory stays.
func TestUpdateMemoryWithoutModel(t *testing.T) {
	for name, tc := range map[string]struct {
		src    embed.Source
		status int
		code   string
	}{
		"no source":    {nil, http.StatusConflict, "no_embedding_model"},
		"no model":     {embed.Fixed{}, http.StatusConflict, "no_embedding_model"},
		"model failed": {embed.Fixed{E: failing{}}, http.StatusBadGateway, "embedding_failed"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, func(c *httpapi.Config) { c.Embeddings = tc.src })
			f.memory("org_a", "bob", "m1", "bob drinks coffee")
			wantError(t, f.do(f.bob, "PATCH", "/api/memories/m1", map[string]any{"text": "tea"}), tc.status, tc.code)
			if m, err := f.st.GetMemory(f.ctx, "org_a", "bob", "m1"); err != nil || m.Text != "bob drinks coffee" {
				t.Errorf("the memory after a refused edit: %+v, %v", m, err)
			}
		})
	}
}

// TestDeleteMemory: deleting removes the memory, its vector and its
// full-text entry; a shared one is an admin's to delete.
func TestDeleteMemory(t *testing.T) {
	f := newFixture(t, nil)
	f.memory("org_a", "bob", "m1", "bob drinks coffee")
	f.memory("org_a", "", "ms", "the office serves coffee")
	f.ok(f.do(f.bob, "DELETE", "/api/memories/m1", nil), http.StatusNoContent, nil)
	wantError(t, f.do(f.bob, "GET", "/api/memories/m1", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.bob, "DELETE", "/api/memories/m1", nil), http.StatusNotFound, "not_found")
	vs, err := f.st.MemoryVectors(f.ctx, "org_a", "bob", embed.Local{}.Model().String())
	f.must(err)
	if len(vs) != 1 || vs[0].ID != "ms" {
		t.Errorf("vectors bob sees after the delete: %+v, want the shared one alone", vs)
	}
	if hits, _ := f.st.SearchMemories(f.ctx, store.MemorySearch{OrgID: "org_a", OwnerID: "bob", Text: "drinks"}); len(hits) != 0 {
		t.Errorf("search finds a deleted memory: %+v", hits)
	}
	wantError(t, f.do(f.bob, "DELETE", "/api/memories/ms", nil), http.StatusNotFound, "not_found")
	var got httpapi.Memory
	f.ok(f.do(f.alice, "GET", "/api/memories/ms", nil), http.StatusOK, &got)
	if !got.Shared {
		t.Errorf("an admin reads the shared memory as %+v", got)
	}
	f.ok(f.do(f.alice, "DELETE", "/api/memories/ms", nil), http.StatusNoContent, nil)
	if n, _ := f.st.CountMemories(f.ctx, "org_a", ""); n != 0 {
		t.Errorf("%d shared memories after the admin's delete", n)
	}
}
