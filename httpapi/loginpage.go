package httpapi

import (
	_ "embed"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// loginFailedHTML is the page a browser gets for a login link that does
// not work: static, no scripts, no styles, nothing from the request.
//
//go:embed login_failed.html
var loginFailedHTML []byte

// loginOtherHTML is the page a browser signed in as one user gets for a
// login link of another: the link is left unused.
//
//go:embed login_other.html
var loginOtherHTML []byte

// loginPageCSP lets the page load nothing at all.
const loginPageCSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// loginFailedPage is the 401 answer to a browser following a bad link.
func loginFailedPage() *loginOutput {
	return &loginOutput{
		Status: http.StatusUnauthorized, ContentType: "text/html; charset=utf-8",
		CSP: loginPageCSP, Body: loginFailedHTML,
	}
}

// loginOtherPage is the 409 answer to a browser whose session is another
// user's than the link's.
func loginOtherPage() *loginOutput {
	return &loginOutput{
		Status: http.StatusConflict, ContentType: "text/html; charset=utf-8",
		CSP: loginPageCSP, Body: loginOtherHTML,
	}
}

// documentLoginPage says in the OpenAPI document that the login's 401 may
// be that page, with its headers, which the 303 never has (nor a body),
// and what Accept does (the middleware reads it, not huma).
func documentLoginPage(op *huma.Operation) {
	ok, failed, other := op.Responses["303"], op.Responses["401"], op.Responses["409"]
	if ok == nil || failed == nil || other == nil {
		panic("httpapi: the login operation lacks its 303, 401 or 409 response")
	}
	op.Parameters = append(op.Parameters, &huma.Param{
		Name: "Accept", In: "header",
		Description: "Preferring text/html to application/json makes a failure the HTML page.",
		Schema:      &huma.Schema{Type: huma.TypeString},
	})
	ok.Content = nil
	if failed.Headers == nil {
		failed.Headers = map[string]*huma.Param{}
	}
	for _, h := range []string{"Content-Type", "Content-Security-Policy"} {
		failed.Headers[h] = ok.Headers[h]
		delete(ok.Headers, h)
	}
	failed.Content["text/html"] = &huma.MediaType{Schema: &huma.Schema{
		Type: huma.TypeString,
		Description: "When the Accept header prefers text/html to application/json: a page saying the link is " +
			"invalid, already used or expired, and how to get a new one.",
	}}
	if other.Content == nil {
		other.Content = map[string]*huma.MediaType{}
	}
	other.Content["text/html"] = &huma.MediaType{Schema: &huma.Schema{
		Type: huma.TypeString,
		Description: "When the Accept header prefers text/html: a page saying the browser is signed in as another " +
			"user, so the link was left unused.",
	}}
}

// prefersHTML reports whether an Accept header ranks text/html above
// application/json: a browser following a link does
// (text/html,…,*/*;q=0.8); a program sending */*, application/json or no
// Accept at all does not. A tie is JSON.
func prefersHTML(accept string) bool {
	return quality(accept, "text", "html") > quality(accept, "application", "json")
}

// quality is the q value an Accept header gives typ/sub: that of its most
// specific matching range (typ/sub, then typ/*, then */*; the highest q
// among equally specific ones), 0 when none matches.
func quality(accept, typ, sub string) float64 {
	best, bestRank := 0.0, -1
	for part := range strings.SplitSeq(accept, ",") {
		mediaRange, params, _ := strings.Cut(part, ";")
		t, st, ok := strings.Cut(strings.TrimSpace(mediaRange), "/")
		if !ok {
			continue
		}
		t, st = strings.ToLower(strings.TrimSpace(t)), strings.ToLower(strings.TrimSpace(st))
		rank := -1
		switch {
		case t == typ && st == sub:
			rank = 2
		case t == typ && st == "*":
			rank = 1
		case t == "*" && st == "*":
			rank = 0
		}
		if rank < 0 || rank < bestRank {
			continue
		}
		q := qValue(params)
		if rank > bestRank || q > best {
			best, bestRank = q, rank
		}
	}
	return best
}

// qValue is the q parameter of a media range's parameters: 1 when absent,
// clamped to [0, 1], 0 when it is not a number.
func qValue(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		name, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		switch {
		case err != nil || !(q >= 0): // NaN too
			return 0
		case q > 1:
			return 1
		}
		return q
	}
	return 1
}
