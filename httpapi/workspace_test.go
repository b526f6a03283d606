package httpapi_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
)

// TestWorkspaceFile serves the caller's own workspace files, images
// inline and the rest as downloads, each with the sandboxing CSP; another
// person's file, a path out of the workspace and a missing file are 404.
func TestWorkspaceFile(t *testing.T) {
	workspaces := t.TempDir()
	f := newFixture(t, func(c *httpapi.Config) { c.Workspaces = workspaces })
	for p, body := range map[string]string{
		"org_a/bob/charts/sales.png": "\x89PNG chart",
		"org_a/bob/chart.svg":        "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
		"org_a/bob/page.html":        "<script>alert(1)</script>",
		"org_a/carol/private.png":    "carol's",
	} {
		full := filepath.Join(workspaces, filepath.FromSlash(p))
		f.must(os.MkdirAll(filepath.Dir(full), 0o700))
		f.must(os.WriteFile(full, []byte(body), 0o600))
	}
	for _, tc := range []struct{ path, typ, disposition, body string }{
		{"charts/sales.png", "image/png", `inline; filename=sales.png`, "\x89PNG chart"},
		{"chart.svg", "image/svg+xml", `inline; filename=chart.svg`, ""},
		{"page.html", "application/octet-stream", `attachment; filename=page.html`, "<script>alert(1)</script>"},
	} {
		r := f.do(f.bob, "GET", "/api/workspace/file?path="+tc.path, nil)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, body %s", tc.path, r.StatusCode, r.body)
		}
		if got := r.Header.Get("Content-Type"); got != tc.typ {
			t.Errorf("%s: Content-Type %q, want %q", tc.path, got, tc.typ)
		}
		if got := r.Header.Get("Content-Disposition"); got != tc.disposition {
			t.Errorf("%s: Content-Disposition %q, want %q", tc.path, got, tc.disposition)
		}
		if got := r.Header.Get("Content-Security-Policy"); got == "" || got[:7] != "sandbox" {
			t.Errorf("%s: CSP %q, want a sandbox", tc.path, got)
		}
		if tc.body != "" && string(r.body) != tc.body {
			t.Errorf("%s: body %q, want %q", tc.path, r.body, tc.body)
		}
	}
	for _, p := range []string{"../carol/private.png", "/etc/passwd", "missing.png", "charts", "..%2Fcarol%2Fprivate.png"} {
		wantError(t, f.do(f.bob, "GET", "/api/workspace/file?path="+p, nil), http.StatusNotFound, "not_found")
	}
	wantError(t, f.do(f.alice, "GET", "/api/workspace/file?path=charts/sales.png", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(nil, "GET", "/api/workspace/file?path=charts/sales.png", nil), http.StatusUnauthorized, "unauthorized")
}
