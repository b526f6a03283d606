package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
)

// requestInfo is what the request log line reports, filled in as the
// request goes (authentication adds who).
type requestInfo struct {
	orgID, userID string
	// tls reports whether the request came over TLS (cookies are Secure).
	tls bool
	// html reports whether the request's Accept header prefers text/html
	// to application/json (a browser following a link).
	html bool
	// crossOrigin reports an unsafe request that a browser sent from a
	// page of another origin (http.CrossOriginProtection's judgement:
	// Sec-Fetch-Site, else Origin against Host; programs send neither).
	crossOrigin bool
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return ri
}

// middleware wraps every request: security headers, the body cap, panic
// recovery and one log line. The query string is never logged: it holds
// login tokens and inspected messages. API requests are answered JSON
// whatever their Accept header: the API has no other format, and huma's
// negotiation panics on some malformed headers (";;,,/", huma v2.37.2);
// whether the header preferred HTML is kept for the login page.
func (s *server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.now()
		ri := &requestInfo{tls: r.TLS != nil}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, ri))
		rec := &statusWriter{ResponseWriter: w}
		h := rec.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if isAPIPath(r.URL.Path) {
			h.Set("Cache-Control", "no-store")
			ri.html = prefersHTML(r.Header.Get("Accept"))
			ri.crossOrigin = s.origins.Check(r) != nil
			r.Header.Set("Accept", "application/json")
		}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("httpapi: panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(rec, errInternal)
				}
			}
			s.logRequest(r, rec, ri, start)
		}()
		limit := s.bodyLimit(r)
		if r.ContentLength > limit {
			writeError(rec, tooLarge(limit))
			return
		}
		if r.Body != nil {
			// One byte over the cap, so huma (reading at most that much)
			// sees the excess and answers 413 rather than a read error.
			r.Body = http.MaxBytesReader(rec, r.Body, limit+1)
		}
		// An upload's files past huma's in-memory share are spooled to
		// temporary files. net/http removes those only for the request it
		// made, and this one is a copy (WithContext above), so they are
		// removed here, whether or not the handler ran.
		defer removeForm(r)
		next.ServeHTTP(rec, r)
	})
}

// removeForm deletes the temporary files of r's parsed multipart form.
func removeForm(r *http.Request) {
	if r.MultipartForm != nil {
		_ = r.MultipartForm.RemoveAll()
	}
}

// bodyLimit is r's body cap: maxUpload for an attachment upload (POST
// /api/conversations/{id}/attachments), the server's MaxBody otherwise.
func (s *server) bodyLimit(r *http.Request) int64 {
	if knowledgeUpload(r) {
		return max(s.maxBody, knowledgeUploadBytes)
	}
	if skillUpload(r) {
		return max(s.maxBody, skillUploadBytes)
	}
	if r.Method == http.MethodPost {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/api/conversations/"); ok {
			if id, tail, ok := strings.Cut(rest, "/"); ok && id != "" && tail == "attachments" {
				return max(s.maxBody, maxUpload)
			}
		}
	}
	return s.maxBody
}

func tooLarge(limit int64) *Error {
	return apiErr(http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the request body is larger than %d bytes", limit))
}

func (s *server) logRequest(r *http.Request, rec *statusWriter, ri *requestInfo, start time.Time) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	s.log.LogAttrs(r.Context(), level, "http request",
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Int64("bytes", rec.bytes),
		slog.Duration("duration", s.now().Sub(start)),
		slog.String("org", ri.orgID),
		slog.String("user", ri.userID),
	)
}

// statusWriter records the status and size of a response. Unwrap lets
// http.ResponseController reach the connection (flush, write deadlines).
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush sends buffered data; event streams rely on it.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
