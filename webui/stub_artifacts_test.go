package webui_test

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// The stub's artifacts: each conversation's, in httpapi's shapes (GET the
// list, one with its history, one version, the content with its
// sandboxing policy, DELETE), and a turn that writes one as the artifact
// tools do, held at two points.

// stubArtifactCSP is httpapi's artifactCSP.
const stubArtifactCSP = "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
	"img-src data:; font-src data:; media-src data:; form-action 'none'; frame-ancestors 'self'; base-uri 'none'"

// msgArtifact runs artifactTurn.
const msgArtifact = "Make the Q3 page"

// stubArtifact is one artifact: its saved versions, and a draft when
// draft is set.
type stubArtifact struct {
	ID, Title, Kind, Language string
	Versions                  []stubArtifactVersion
	Draft                     string // the draft's content; "" for none
	DraftRev                  int
}

// stubArtifactVersion is one saved version.
type stubArtifactVersion struct {
	Title, Change, Content string
	At                     time.Time
}

func (a *stubArtifact) view() map[string]any {
	at := stubArtifactAt(0)
	if n := len(a.Versions); n > 0 {
		at = a.Versions[n-1].At
	}
	v := map[string]any{"id": a.ID, "title": a.Title, "kind": a.Kind, "version": len(a.Versions),
		"created_at": stubArtifactAt(0).Format(time.RFC3339), "updated_at": at.Format(time.RFC3339)}
	if a.Language != "" {
		v["language"] = a.Language
	}
	if a.Draft != "" {
		v["draft"] = map[string]any{"rev": a.DraftRev, "inspected": false, "updated_at": at.Format(time.RFC3339)}
	}
	return v
}

// stubArtifactAt is the time of an artifact's version n (0: its creation).
func stubArtifactAt(n int) time.Time {
	return time.Date(2026, 1, 6, 9, 0, 0, 0, time.UTC).Add(time.Duration(n) * 7 * time.Minute)
}

// addArtifact gives conversation conv an artifact whose versions hold
// contents (none: only a first draft), each a change as httpapi names it.
func (s *stubAPI) addArtifact(conv, id, title, kind string, contents ...string) *stubArtifact {
	a := &stubArtifact{ID: id, Title: title, Kind: kind}
	for i, c := range contents {
		change := "create"
		if i > 0 {
			change = "update"
		}
		a.Versions = append(a.Versions, stubArtifactVersion{Title: title, Change: change, Content: c, At: stubArtifactAt(i + 1)})
	}
	if len(contents) == 0 {
		a.Draft, a.DraftRev = "draft", 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.artifacts == nil {
		s.artifacts = map[string][]*stubArtifact{}
	}
	s.artifacts[conv] = append(s.artifacts[conv], a)
	return a
}

func (s *stubAPI) routeArtifacts(api func(string, http.HandlerFunc)) {
	const base = "/api/conversations/{id}/artifacts"
	api("GET "+base, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		list := []any{}
		for _, a := range s.artifacts[r.PathValue("id")] {
			list = append(list, a.view())
		}
		writeJSON(w, http.StatusOK, map[string]any{"artifacts": list})
	})
	api("GET "+base+"/{artifact}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		a := s.artifactOf(w, r)
		if a == nil {
			return
		}
		v := a.view()
		vs := []any{}
		for i, ver := range a.Versions {
			vs = append(vs, map[string]any{"version": i + 1, "title": ver.Title, "change": ver.Change, "size": len(ver.Content),
				"checked": a.Kind == "html" || a.Kind == "svg", "created_at": ver.At.Format(time.RFC3339)})
		}
		v["versions"] = vs
		if n := len(a.Versions); n > 0 {
			v["content"] = a.Versions[n-1].Content
		}
		writeJSON(w, http.StatusOK, v)
	})
	api("GET "+base+"/{artifact}/versions/{version}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		a := s.artifactOf(w, r)
		if a == nil {
			return
		}
		n, err := strconv.Atoi(r.PathValue("version"))
		if err != nil || n < 1 || n > len(a.Versions) {
			writeErr(w, http.StatusNotFound, "not_found", "no such version of this artifact")
			return
		}
		ver := a.Versions[n-1]
		writeJSON(w, http.StatusOK, map[string]any{"version": n, "title": ver.Title, "change": ver.Change, "size": len(ver.Content),
			"checked": true, "created_at": ver.At.Format(time.RFC3339), "content": ver.Content})
	})
	api("GET "+base+"/{artifact}/content", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		a := s.artifactOf(w, r)
		if a == nil {
			return
		}
		n := len(a.Versions)
		if q := r.URL.Query().Get("version"); q != "" {
			n, _ = strconv.Atoi(q)
		}
		if n < 1 || n > len(a.Versions) {
			writeErr(w, http.StatusNotFound, "not_found", "no such version of this artifact")
			return
		}
		types := map[string]string{"markdown": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8",
			"svg": "image/svg+xml", "csv": "text/csv; charset=utf-8", "code": "text/plain; charset=utf-8", "mermaid": "text/plain; charset=utf-8"}
		disposition := "inline"
		if r.URL.Query().Get("download") == "true" {
			disposition = "attachment"
		}
		h := w.Header()
		h.Set("Content-Type", types[a.Kind])
		h.Set("Content-Security-Policy", stubArtifactCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": a.Versions[n-1].Title + "." + a.Kind}))
		_, _ = w.Write([]byte(a.Versions[n-1].Content))
	})
	api("DELETE "+base+"/{artifact}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.artifactOf(w, r) == nil {
			return
		}
		conv := r.PathValue("id")
		s.artifacts[conv] = slices.DeleteFunc(s.artifacts[conv], func(a *stubArtifact) bool { return a.ID == r.PathValue("artifact") })
		w.WriteHeader(http.StatusNoContent)
	})
}

// artifactOf returns the request's artifact, or answers 404; s.mu is held.
func (s *stubAPI) artifactOf(w http.ResponseWriter, r *http.Request) *stubArtifact {
	for _, a := range s.artifacts[r.PathValue("id")] {
		if a.ID == r.PathValue("artifact") {
			return a
		}
	}
	writeErr(w, http.StatusNotFound, "not_found", "no such artifact in this conversation")
	return nil
}

// Two versions of the live turn's HTML artifact: each reports to the page
// that framed it what became of its attempt to reach the page's document
// and its own origin.
var liveHTML = []string{artifactHTML("v1", "Q3 sales"), artifactHTML("v2", "Q3 sales, revised")}

func artifactHTML(version, heading string) string {
	return `<!doctype html><html><head><title>Q3</title></head><body><h1>` + heading + `</h1><script>
let reached;
try { parent.document.body.dataset.pwned = '` + version + `'; reached = 'parent.document: ' + parent.document.title; }
catch (e) { reached = e.name; }
parent.postMessage({ artifact: '` + version + `', reached, origin: String(self.origin) }, '*');
</script></body></html>`
}

// artifactTurn writes art_live as the artifact tools do: created as a
// draft (held at "artifact-draft"), inspected and saved as version 1
// (held at "artifact-saved"), then updated, inspected and saved as
// version 2, and answers.
func (s *stubAPI) artifactTurn(ctx context.Context, e *sse, conv string) {
	step := 0
	call := func(name string, args map[string]any, result string, change func(a *stubArtifact)) {
		step++
		id := fmt.Sprintf("call_a%d", step)
		e.send(map[string]any{"type": "tool_call", "call": map[string]any{"id": id, "name": name, "args": args}})
		if change != nil {
			s.mu.Lock()
			for _, a := range s.artifacts[conv] {
				if a.ID == "art_live" {
					change(a)
				}
			}
			s.mu.Unlock()
		}
		e.send(map[string]any{"type": "tool_result", "result": map[string]any{"call_id": id, "name": name, "content": result}})
	}
	save := func(n int) func(a *stubArtifact) {
		return func(a *stubArtifact) {
			change := map[bool]string{true: "create", false: "update"}[n == 1]
			a.Versions = append(a.Versions, stubArtifactVersion{Title: a.Title, Change: change, Content: a.Draft, At: stubArtifactAt(n)})
			a.Draft = ""
		}
	}
	s.mu.Lock()
	if s.artifacts == nil {
		s.artifacts = map[string][]*stubArtifact{}
	}
	// Created before its result is sent, as the tool stores it first.
	s.artifacts[conv] = append(s.artifacts[conv], &stubArtifact{ID: "art_live", Title: "Q3", Kind: "html", Draft: liveHTML[0], DraftRev: 1})
	s.mu.Unlock()
	call("create_artifact", map[string]any{"title": "Q3", "kind": "html", "content": liveHTML[0]},
		`Created artifact art_live "Q3" (html): draft 1, not inspected yet. Call inspect_artifact to check it, then save_artifact.`,
		nil)
	if !s.wait(ctx, "artifact-draft") {
		return
	}
	call("inspect_artifact", map[string]any{"id": "art_live"}, `Inspected draft 1 of artifact art_live "Q3": no console errors.`, nil)
	call("save_artifact", map[string]any{"id": "art_live"}, `Saved artifact art_live "Q3" (html): saved as version 1, shown to the user.`, save(1))
	if !s.wait(ctx, "artifact-saved") {
		return
	}
	call("update_artifact", map[string]any{"id": "art_live", "edits": []any{map[string]any{"old_string": "v1", "new_string": "v2"}}},
		`Updated artifact art_live "Q3" (html): draft 2, not inspected yet. Call inspect_artifact to check it, then save_artifact. The user still sees version 1.`,
		func(a *stubArtifact) { a.Draft, a.DraftRev = liveHTML[1], 2 })
	call("inspect_artifact", map[string]any{"id": "art_live"}, `Inspected draft 2 of artifact art_live "Q3": no console errors.`, nil)
	call("save_artifact", map[string]any{"id": "art_live"}, `Saved artifact art_live "Q3" (html): saved as version 2, shown to the user.`, save(2))
	e.send(map[string]any{"type": "text", "text": "The Q3 page is in the panel."})
	e.send(map[string]any{"type": "done", "stop": "answer"})
}
