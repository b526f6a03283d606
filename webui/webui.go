// Package webui is Quiver's web pages: a single-page app of plain HTML, CSS
// and JavaScript modules, embedded in the binary and served as they are
// (no build step, no Node.js at build or run time, no request leaves the
// origin). The libraries under assets/vendor are npm's files as published,
// copied there by scripts/webui-vendor from the versions
// vendor/package-lock.json pins. The pages talk to package httpapi's JSON
// API; httpapi mounts Handler for every path outside the API.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// ContentSecurityPolicy is the policy every response carries: scripts,
// styles, images and API calls from the page's own origin only; no inline
// script or style, no plugins, no framing, no <base> rewriting.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// file is one embedded asset, read once.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// handler serves the embedded files; it is immutable after Handler builds it.
type handler struct {
	files map[string]file // by URL path: "/" and "/assets/…"
}

// Handler serves the web UI: index.html at "/" and the files under
// "/assets/". Other paths are 404, other methods than GET and HEAD 405.
// Every response carries ContentSecurityPolicy and nosniff; files carry a
// strong ETag (a hash of their bytes) and Cache-Control: no-cache, so a
// browser revalidates and gets 304 until the binary changes. The handler
// is safe for concurrent use.
func Handler() http.Handler {
	h := &handler{files: map[string]file{}}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		f := file{
			body:        body,
			contentType: contentType(p),
			etag:        `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`,
		}
		if p == "assets/index.html" {
			h.files["/"] = f
			return nil
		}
		h.files["/"+p] = f
		return nil
	})
	if err != nil {
		panic("webui: reading embedded assets: " + err.Error()) // the binary is broken
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	f, ok := h.files[r.URL.Path]
	if !ok {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hd.Set("Content-Type", f.contentType)
	hd.Set("ETag", f.etag)
	hd.Set("Cache-Control", "no-cache")
	// ServeContent answers If-None-Match with 304 and handles HEAD and
	// ranges; the zero modtime leaves Last-Modified out.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}

// contentType is the type of an embedded file, by extension. Every asset
// has a known extension; anything else is served as bytes, never sniffed.
func contentType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".ico":
		return "image/x-icon"
	case ".json":
		return "application/json"
	}
	return "application/octet-stream"
}
