package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
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
		{method: "GET", path: "/api/agents/only-a/model-status", foreign: 404},
		{method: "GET", path: "/api/console/tools?agent=only-a", foreign: 404},
		{method: "POST", path: "/api/console/run", body: map[string]any{"agent": "only-a", "tool": "calculate", "arguments": map[string]any{"expression": "1+1"}}, foreign: 404},
		{method: "PATCH", path: "/api/me", body: map[string]any{"department": "Ops"}},
		{method: "GET", path: "/api/settings", admin: true},
		{method: "PUT", path: "/api/settings", body: settingsBody(0), admin: true},
		{method: "GET", path: "/api/users", admin: true},
		{method: "POST", path: "/api/users", body: map[string]any{"display_name": "Eve"}, admin: true},
		{method: "PATCH", path: "/api/users/carol", body: map[string]any{"department": "Ops"}, admin: true, foreign: 404},
		{method: "DELETE", path: "/api/users/carol", admin: true, foreign: 404},
		{method: "POST", path: "/api/users/carol/login-link", admin: true, foreign: 404},
		{method: "POST", path: "/api/users/carol/enable", admin: true, foreign: 404},
		{method: "POST", path: "/api/users/carol/erase", admin: true, foreign: 404},
		{method: "GET", path: "/api/deliberate", admin: true},
		{method: "PUT", path: "/api/deliberate", body: map[string]any{"enabled": true, "history_turns": -1}, admin: true},
		{method: "POST", path: "/api/deliberate/triggers", body: map[string]any{"target": "calculator", "phrase": "crunch it"}, admin: true},
		{method: "DELETE", path: "/api/deliberate/triggers?target=calculator&phrase=crunch+it", admin: true, foreign: 404},
		{method: "GET", path: "/api/me/deliberate"},
		{method: "PUT", path: "/api/me/deliberate", body: map[string]any{"mode": "on"}},
		{method: "GET", path: "/api/memories"},
		{method: "GET", path: "/api/memories?scope=shared", admin: true},
		{method: "GET", path: "/api/memories/mem_bob", foreign: 404},
		{method: "PATCH", path: "/api/memories/mem_bob", body: map[string]any{"text": "tea, not coffee"}, foreign: 404},
		{method: "DELETE", path: "/api/memories/mem_bob", foreign: 404},
	}
}

// TestAuthorization tries every authenticated endpoint anonymously, with
// a bad token, as an admin of another organisation and as a member.
func TestAuthorization(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	f.pause("org_a", "bob", "conv_bob")
	f.mcpServer("org_a", "search-a", nil, "")
	f.memory("org_a", "bob", "mem_bob", "bob drinks coffee")
	// org_a's trigger, which dave's DELETE must not reach.
	f.must(f.st.AddIntentTrigger(f.ctx, store.IntentTrigger{OrgID: "org_a", Target: "calculator", Phrase: "crunch it", CreatedAt: start}, 0))
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
	// Nothing above reached the engine or changed org_a's people.
	if _, ran := f.eng.lastRun(); ran {
		t.Error("a refused console run reached the engine")
	}
	u, err := f.st.GetUser(f.ctx, "org_a", "carol")
	f.must(err)
	if u.Department != "R&D" || !u.DisabledAt.IsZero() {
		t.Errorf("a refused request changed carol: %+v", u)
	}
	if ts, err := f.st.ListIntentTriggers(f.ctx, "org_a"); err != nil || len(ts) != 1 {
		t.Errorf("org_a's triggers after refused requests: %v %v", ts, err)
	}
	users, err := f.st.ListUsers(f.ctx, "org_a")
	f.must(err)
	if len(users) != 3 {
		t.Errorf("org_a has %d users after refused requests, want 3", len(users))
	}
}

// TestOrganisationsAreApart: an admin's organisation-wide lists and
// settings are their own organisation's only.
func TestOrganisationsAreApart(t *testing.T) {
	f := newFixture(t, nil)
	var users struct{ Users []httpapi.User }
	f.ok(f.do(f.dave, "GET", "/api/users", nil), http.StatusOK, &users)
	if len(users.Users) != 1 || users.Users[0].ID != "dave" {
		t.Errorf("dave lists %+v, want himself alone", users.Users)
	}
	f.ok(f.do(f.alice, "PUT", "/api/settings", settingsBody(0)), http.StatusOK, nil)
	var st httpapi.Settings
	f.ok(f.do(f.dave, "GET", "/api/settings", nil), http.StatusOK, &st)
	if st.Version != 0 {
		t.Errorf("dave's organisation sees version %d after alice saved hers", st.Version)
	}
	f.ok(f.do(f.dave, "GET", "/api/tools", nil), http.StatusOK, nil)
	f.ok(f.do(f.dave, "GET", "/api/console/tools?agent=helper", nil), http.StatusOK, nil)
	for _, c := range append(f.eng.catalogCallers, f.eng.consoleCallers...) {
		if c.OrgID != "org_b" || c.UserID != "dave" {
			t.Errorf("the engine was asked as %+v, want dave of org_b", c)
		}
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
