package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
)

func TestOpenAPIDocument(t *testing.T) {
	f := newFixture(t, nil)
	r := f.do(nil, "GET", "/openapi.json", nil)
	f.ok(r, http.StatusOK, nil)
	var doc struct {
		OpenAPI    string `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Schemas         map[string]json.RawMessage
			SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
		}
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("/openapi.json is not JSON: %v", err)
	}
	var ops []string
	for path, item := range doc.Paths {
		for method := range item {
			ops = append(ops, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(ops)
	want := []string{
		"DELETE /api/agents/{name}", "DELETE /api/agents/{name}/knowledge/{id}", "DELETE /api/agents/{name}/skills/{skill}", "DELETE /api/budgets/{who}", "DELETE /api/conversations/{id}", "DELETE /api/conversations/{id}/artifacts/{artifact}", "DELETE /api/conversations/{id}/attachments/{attachment}", "DELETE /api/deliberate/triggers", "DELETE /api/mcp-servers/{name}", "DELETE /api/memories/{id}", "DELETE /api/skills/{name}", "DELETE /api/tasks/{id}", "DELETE /api/tokens/{id}", "DELETE /api/users/{id}",
		"GET /api/agents", "GET /api/agents/{name}", "GET /api/agents/{name}/inspect", "GET /api/agents/{name}/knowledge", "GET /api/agents/{name}/model-status", "GET /api/agents/{name}/models", "GET /api/agents/{name}/skills", "GET /api/budget", "GET /api/budgets", "GET /api/console/tools",
		"GET /api/conversations", "GET /api/conversations/{id}", "GET /api/conversations/{id}/artifacts", "GET /api/conversations/{id}/artifacts/{artifact}", "GET /api/conversations/{id}/artifacts/{artifact}/content", "GET /api/conversations/{id}/artifacts/{artifact}/versions/{version}", "GET /api/conversations/{id}/attachments", "GET /api/conversations/{id}/attachments/{attachment}", "GET /api/conversations/{id}/events",
		"GET /api/conversations/{id}/inspect", "GET /api/conversations/{id}/messages", "GET /api/conversations/{id}/models", "GET /api/conversations/{id}/pins", "GET /api/conversations/{id}/threads", "GET /api/deliberate", "GET /api/mcp-servers",
		"GET /api/mcp-servers/{name}", "GET /api/me", "GET /api/me/deliberate", "GET /api/memories", "GET /api/memories/{id}", "GET /api/settings", "GET /api/skills", "GET /api/skills/{name}", "GET /api/tasks", "GET /api/tasks/{id}", "GET /api/tokens", "GET /api/tools",
		"GET /api/users", "GET /api/workspace/file", "GET /healthz", "GET /login",
		"PATCH /api/conversations/{id}", "PATCH /api/me", "PATCH /api/memories/{id}", "PATCH /api/tasks/{id}", "PATCH /api/users/{id}",
		"POST /api/agents/{name}/knowledge", "POST /api/console/run", "POST /api/conversations", "POST /api/conversations/{id}/answer", "POST /api/conversations/{id}/attachments", "POST /api/conversations/{id}/branch", "POST /api/conversations/{id}/cancel",
		"POST /api/conversations/{id}/messages", "POST /api/deliberate/triggers", "POST /api/login", "POST /api/logout", "POST /api/mcp-servers",
		"POST /api/mcp-servers/{name}/disable", "POST /api/mcp-servers/{name}/enable",
		"POST /api/settings/connections/test", "POST /api/skills", "POST /api/tokens",
		"POST /api/users", "POST /api/users/{id}/enable", "POST /api/users/{id}/erase", "POST /api/users/{id}/login-link",
		"POST /login",
		"PUT /api/agents/{name}", "PUT /api/agents/{name}/skills/{skill}", "PUT /api/budgets/{who}", "PUT /api/deliberate", "PUT /api/me/deliberate", "PUT /api/settings",
	}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	for _, name := range []string{"Error", "ErrorInfo", "Event", "Conversation", "Inspection", "Catalog", "MCPServer",
		"Settings", "SettingsUpdate", "User", "LoginLink", "ConsoleTool", "ToolRun", "ModelStatus", "ModelChoice", "Memory"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("no schema %s", name)
		}
	}
	if doc.Components.SecuritySchemes["bearer"] == nil || doc.Components.SecuritySchemes["session"] == nil {
		t.Errorf("security schemes %v", doc.Components.SecuritySchemes)
	}
	send := string(doc.Paths["/api/conversations/{id}/messages"]["post"])
	for _, s := range []string{"text/event-stream", `"tool_result"`, `"next_actions"`, `"done"`, "#/components/schemas/Event", "Retry-After"} {
		if !strings.Contains(send, s) {
			t.Errorf("send-message does not mention %s", s)
		}
	}
	for _, op := range []string{"get", "post"} {
		login := string(doc.Paths["/login"][op])
		for _, s := range []string{"text/html", "Content-Security-Policy", "X-Frame-Options", "invalid, already used or expired", "application/json"} {
			if !strings.Contains(login, s) {
				t.Errorf("%s /login does not mention %s", op, s)
			}
		}
	}
	if form := string(doc.Paths["/login"]["post"]); !strings.Contains(form, "application/x-www-form-urlencoded") || !strings.Contains(form, `"confirm"`) {
		t.Errorf("POST /login does not document its form: %s", form)
	}
	if strings.Contains(string(r.body), `"422"`) {
		t.Error("the document promises 422s; validation failures are 400s")
	}
}

func TestHealthAndTools(t *testing.T) {
	f := newFixture(t, nil)
	var h struct{ Status string }
	f.ok(f.do(nil, "GET", "/healthz", nil), http.StatusOK, &h)
	if h.Status != "ok" {
		t.Errorf("health %+v", h)
	}
	var cat httpapi.Catalog
	f.ok(f.do(f.bob, "GET", "/api/tools", nil), http.StatusOK, &cat)
	if diff := cmp.Diff(fakeCatalog, cat); diff != "" {
		t.Errorf("catalog (-want +got):\n%s", diff)
	}
	if c := f.eng.catalogCallers; len(c) != 1 || c[0].OrgID != "org_a" || c[0].UserID != "bob" {
		t.Errorf("the catalog was asked for %+v, want bob of org_a", c)
	}
	f.st.Close()
	wantError(t, f.do(nil, "GET", "/healthz", nil), http.StatusServiceUnavailable, "unavailable")
}

func TestUnknownRoutes(t *testing.T) {
	f := newFixture(t, nil)
	wantError(t, f.do(f.bob, "GET", "/api/nope", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(nil, "GET", "/", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.bob, "PATCH", "/api/conversations", nil), http.StatusMethodNotAllowed, "method_not_allowed")
	wantError(t, f.do(f.bob, "DELETE", "/api/me", nil), http.StatusMethodNotAllowed, "method_not_allowed")

	ui := newFixture(t, func(c *httpapi.Config) {
		c.UI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page "+r.URL.Path) })
	})
	r := ui.do(nil, "GET", "/chat", nil)
	ui.ok(r, http.StatusOK, nil)
	if string(r.body) != "page /chat" {
		t.Errorf("UI answered %q", r.body)
	}
	wantError(t, ui.do(nil, "GET", "/api/nope", nil), http.StatusNotFound, "not_found")
}

func TestBodyCap(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.MaxBody = 1024 })
	big := `{"agent":"helper","title":"` + strings.Repeat("x", 2000) + `"}`
	wantError(t, f.do(f.bob, "POST", "/api/conversations", big), http.StatusRequestEntityTooLarge, "body_too_large")
	// Without a Content-Length (chunked), the cap applies while reading.
	chunked := io.MultiReader(strings.NewReader(big))
	wantError(t, f.do(f.bob, "POST", "/api/conversations", chunked), http.StatusRequestEntityTooLarge, "body_too_large")
	wantError(t, f.do(f.bob, "POST", "/api/conversations/c/messages", io.MultiReader(strings.NewReader(`{"message":"`+strings.Repeat("y", 5000)+`"}`))), http.StatusRequestEntityTooLarge, "body_too_large")

	exact := `{"agent":"helper","title":"` + strings.Repeat("x", 1024-len(`{"agent":"helper","title":""}`)) + `"}`
	if len(exact) != 1024 {
		t.Fatalf("exact body is %d bytes", len(exact))
	}
	// A body of exactly the cap passes the cap (the title is too long).
	wantError(t, f.do(f.bob, "POST", "/api/conversations", exact), http.StatusBadRequest, "invalid_request")
	wantError(t, f.do(f.bob, "POST", "/api/conversations", io.MultiReader(strings.NewReader(exact))), http.StatusBadRequest, "invalid_request")
}

func TestRequestLog(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob/inspect?message=my+private+words", nil), http.StatusOK, nil)
	logs := f.logs.String()
	for _, want := range []string{"method=GET", "path=/api/conversations/conv_bob/inspect", "status=200", "org=org_a", "user=bob"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
	for _, secret := range []string{"private", f.bob.token} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}

// TestMalformedAccept: huma's content negotiation panics on some Accept
// headers; the API answers JSON whatever the header says.
func TestMalformedAccept(t *testing.T) {
	f := newFixture(t, nil)
	for _, accept := range []string{";;,,/", "a;,", "text/html;q=,", "application/xml", "*/*"} {
		var me httpapi.Me
		f.ok(f.do(f.bob, "GET", "/api/me", nil, "Accept: "+accept), http.StatusOK, &me)
		wantError(t, f.do(f.bob, "GET", "/api/conversations/nope", nil, "Accept: "+accept), http.StatusNotFound, "not_found")
	}
	if strings.Contains(f.logs.String(), "panic") {
		t.Errorf("a request panicked:\n%s", f.logs)
	}
	r := f.do(nil, "GET", "/openapi.yaml", nil, "Accept: text/html")
	f.ok(r, http.StatusOK, nil)
	if !strings.HasPrefix(string(r.body), "components:") && !strings.HasPrefix(string(r.body), "openapi:") {
		t.Errorf("/openapi.yaml starts %q", r.body[:min(40, len(r.body))])
	}
}
