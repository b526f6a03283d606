package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// endpoint is one operation with a request that would succeed for its
// rightful caller, on resources of bob (a member of org_a).
type endpoint struct {
	method, path string
	body         any
	// admin marks admin-only operations (bob gets 403).
	admin bool
	// foreign is what dave (admin of org_b) gets: 404 for org_a's
	// resources; 0 when the operation is not about one.
	foreign int
}

func endpoints(tokenID string) []endpoint {
	return []endpoint{
		{method: "GET", path: "/api/me"},
		{method: "POST", path: "/api/logout"},
		{method: "POST", path: "/api/tokens", body: map[string]any{"label": "x"}},
		{method: "GET", path: "/api/tokens"},
		{method: "DELETE", path: "/api/tokens/" + tokenID, foreign: 404},
		{method: "POST", path: "/api/conversations", body: map[string]any{"agent": "helper"}},
		{method: "GET", path: "/api/conversations"},
		{method: "GET", path: "/api/conversations/conv_bob", foreign: 404},
		{method: "GET", path: "/api/conversations/conv_bob/messages", foreign: 404},
		{method: "GET", path: "/api/conversations/conv_bob/inspect?message=hi", foreign: 404},
		{method: "POST", path: "/api/conversations/conv_bob/messages", body: map[string]any{"message": "hi"}, foreign: 404},
		{method: "POST", path: "/api/conversations/conv_bob/answer", body: map[string]any{"answer": "metres"}, foreign: 404},
		{method: "POST", path: "/api/conversations/conv_bob/cancel", foreign: 404},
		{method: "GET", path: "/api/agents"},
		{method: "GET", path: "/api/agents/only-a", foreign: 404},
		{method: "PUT", path: "/api/agents/only-a", body: map[string]any{"definition": "name: only-a\n"}, admin: true},
		{method: "DELETE", path: "/api/agents/only-a", admin: true, foreign: 404},
		{method: "GET", path: "/api/mcp-servers", admin: true},
		{method: "GET", path: "/api/mcp-servers/search-a", admin: true, foreign: 404},
		{method: "POST", path: "/api/mcp-servers", body: map[string]any{"name": "new", "url": "https://mcp.example/mcp"}, admin: true},
		{method: "POST", path: "/api/mcp-servers/search-a/enable", admin: true, foreign: 404},
		{method: "POST", path: "/api/mcp-servers/search-a/disable", admin: true, foreign: 404},
		{method: "DELETE", path: "/api/mcp-servers/search-a?confirm=true", admin: true, foreign: 404},
		{method: "GET", path: "/api/tools"},
	}
}

// TestAuthorization tries every authenticated endpoint anonymously, with
// a bad token, as an admin of another organisation and as a member.
func TestAuthorization(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	f.pause("org_a", "bob", "conv_bob")
	f.mcpServer("org_a", "search-a", nil, "")
	var toks struct{ Tokens []struct{ ID string } }
	f.ok(f.do(f.bob, "GET", "/api/tokens", nil), 200, &toks)
	bobToken := toks.Tokens[0].ID

	for _, ep := range endpoints(bobToken) {
		t.Run(ep.method+" "+ep.path, func(t *testing.T) {
			r := f.do(nil, ep.method, ep.path, ep.body)
			wantError(t, r, http.StatusUnauthorized, "unauthorized")
			if r.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			wantError(t, f.do(&who{token: "not-a-token"}, ep.method, ep.path, ep.body), http.StatusUnauthorized, "unauthorized")
			wantError(t, f.do(&who{session: "not-a-session"}, ep.method, ep.path, ep.body), http.StatusUnauthorized, "unauthorized")
			if ep.admin {
				wantError(t, f.do(f.bob, ep.method, ep.path, ep.body), http.StatusForbidden, "forbidden")
			}
			if ep.foreign != 0 {
				wantError(t, f.do(f.dave, ep.method, ep.path, ep.body), ep.foreign, "not_found")
			}
		})
	}
}

// TestConversationsArePrivate: another member of the same organisation,
// and its admin, see bob's conversation as absent, exactly like a missing
// one; lists show only the caller's own.
func TestConversationsArePrivate(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	f.pause("org_a", "bob", "conv_bob")
	for _, ep := range endpoints("") {
		if ep.foreign == 0 || !strings.HasPrefix(ep.path, "/api/conversations/") {
			continue
		}
		for name, w := range map[string]*who{"carol": f.carol, "alice (admin)": f.alice} {
			r := f.do(w, ep.method, ep.path, ep.body)
			wantError(t, r, http.StatusNotFound, "not_found")
			missing := f.do(w, ep.method, strings.Replace(ep.path, "conv_bob", "conv_none", 1), ep.body)
			if string(r.body) != string(missing.body) {
				t.Errorf("%s %s as %s: %s differs from a missing conversation's %s", ep.method, ep.path, name, r.body, missing.body)
			}
		}
	}
	for _, w := range []*who{f.carol, f.alice, f.dave} {
		var list struct{ Conversations []struct{ ID string } }
		f.ok(f.do(w, "GET", "/api/conversations", nil), 200, &list)
		if len(list.Conversations) != 0 {
			t.Errorf("list shows another user's conversations: %+v", list.Conversations)
		}
	}
}
