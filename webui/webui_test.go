package webui_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/webui"
)

func TestHandler(t *testing.T) {
	h := webui.Handler()
	tests := []struct {
		name, method, path string
		status             int
		contentType        string
		bodyHas            string
	}{
		{"index at root", "GET", "/", 200, "text/html; charset=utf-8", `<script type="module" src="/assets/js/main.js"></script>`},
		{"head of index", "HEAD", "/", 200, "text/html; charset=utf-8", ""},
		{"module", "GET", "/assets/js/main.js", 200, "text/javascript; charset=utf-8", "import"},
		{"stylesheet", "GET", "/assets/css/app.css", 200, "text/css; charset=utf-8", ":root"},
		{"vendored module", "GET", "/assets/vendor/markdown-it/markdown-it.esm.min.mjs", 200, "text/javascript; charset=utf-8", "@license MIT"},
		{"vendored theme", "GET", "/assets/vendor/highlight.js/a11y-dark.min.css", 200, "text/css; charset=utf-8", ".hljs"},
		{"vendored licence", "GET", "/assets/vendor/dompurify/LICENSE", 200, "application/octet-stream", "Apache License"},
		{"icon", "GET", "/assets/icon.svg", 200, "image/svg+xml", "<svg"},
		{"unknown asset", "GET", "/assets/js/nope.js", 404, "text/plain; charset=utf-8", "not found"},
		{"asset folder", "GET", "/assets/", 404, "text/plain; charset=utf-8", ""},
		{"index by name", "GET", "/index.html", 404, "text/plain; charset=utf-8", ""},
		{"other page", "GET", "/chat", 404, "text/plain; charset=utf-8", ""},
		{"dot-dot", "GET", "/assets/../webui.go", 404, "text/plain; charset=utf-8", ""},
		{"post", "POST", "/", 405, "text/plain; charset=utf-8", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			res := rec.Result()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tt.status)
			}
			got := map[string]string{
				"Content-Type":            res.Header.Get("Content-Type"),
				"Content-Security-Policy": res.Header.Get("Content-Security-Policy"),
				"X-Content-Type-Options":  res.Header.Get("X-Content-Type-Options"),
				"X-Frame-Options":         res.Header.Get("X-Frame-Options"),
			}
			want := map[string]string{
				"Content-Type":            tt.contentType,
				"Content-Security-Policy": webui.ContentSecurityPolicy,
				"X-Content-Type-Options":  "nosniff",
				"X-Frame-Options":         "DENY",
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("headers (-want +got):\n%s", d)
			}
			if !strings.Contains(string(body), tt.bodyHas) {
				t.Errorf("body lacks %q", tt.bodyHas)
			}
			if tt.method == "HEAD" && len(body) != 0 {
				t.Errorf("HEAD has a body of %d bytes", len(body))
			}
			if tt.status == 200 && (res.Header.Get("ETag") == "" || res.Header.Get("Cache-Control") != "no-cache") {
				t.Errorf("ETag %q, Cache-Control %q", res.Header.Get("ETag"), res.Header.Get("Cache-Control"))
			}
		})
	}
}

func TestHandlerRevalidates(t *testing.T) {
	h := webui.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/assets/js/api.js", nil))
	etag := rec.Header().Get("ETag")
	if !regexp.MustCompile(`^"[A-Za-z0-9_-]{16}"$`).MatchString(etag) {
		t.Fatalf("ETag %q is not a quoted hash", etag)
	}
	if again := webui.Handler(); again != nil {
		rec := httptest.NewRecorder()
		again.ServeHTTP(rec, httptest.NewRequest("GET", "/assets/js/api.js", nil))
		if rec.Header().Get("ETag") != etag {
			t.Errorf("ETag changed between handlers: %q, %q", etag, rec.Header().Get("ETag"))
		}
	}
	for _, tt := range []struct {
		ifNoneMatch string
		status      int
	}{{etag, http.StatusNotModified}, {`"other"`, http.StatusOK}} {
		req := httptest.NewRequest("GET", "/assets/js/api.js", nil)
		req.Header.Set("If-None-Match", tt.ifNoneMatch)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("If-None-Match %s: status %d, want %d", tt.ifNoneMatch, rec.Code, tt.status)
		}
	}
}

// TestAssetsStayInsideThePolicy checks the sources for what the CSP would
// block or what would leave the origin: inline scripts, styles and event
// handlers, markup built from strings, and imports or URLs elsewhere. The
// libraries in assets/vendor are left out: they are npm's files as
// published, which scripts/webui-vendor --check holds to the lockfile, and
// the browser tests run them under the policy.
func TestAssetsStayInsideThePolicy(t *testing.T) {
	forbidden := map[string][]*regexp.Regexp{
		".html": {
			regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]`), // inline script
			regexp.MustCompile(`<style`),
			regexp.MustCompile(`\sstyle=`),
			regexp.MustCompile(`\son[a-z]+=`),
			regexp.MustCompile(`(?:src|href)="(?:https?:)?//`),
		},
		".js": {
			regexp.MustCompile(`\.innerHTML|outerHTML\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function`),
			regexp.MustCompile(`setAttribute\(\s*'style'`),
			regexp.MustCompile(`\bimport\b[^;]*\bfrom\s*'(?:[^.]|\.[^./])`), // only relative imports
			regexp.MustCompile(`fetch\(\s*['"\x60]https?:`),
		},
		".css": {
			regexp.MustCompile(`@import|url\(\s*['"]?(?:https?:)?//`),
		},
	}
	err := filepath.WalkDir("assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == filepath.Join("assets", "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if filepath.Ext(p) == ".html" {
			for _, tag := range regexp.MustCompile(`<script\b[^>]*>`).FindAll(src, -1) {
				if !strings.Contains(string(tag), ` src="/assets/`) {
					t.Errorf("%s: %s loads no script file", p, tag)
				}
			}
		}
		for _, re := range forbidden[filepath.Ext(p)] {
			if loc := re.FindIndex(src); loc != nil {
				line := strings.Count(string(src[:loc[0]]), "\n") + 1
				t.Errorf("%s:%d: %q matches %s", p, line, src[loc[0]:loc[1]], re)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
