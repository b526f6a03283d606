package httpapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// loginFailedHTML is the page a browser gets for a login link that does
// not work: static, no scripts, nothing from the request; like every
// login page it is styled by the web UI's own stylesheet (same origin,
// no inline style).
//
//go:embed login_failed.html
var loginFailedHTML []byte

// loginOtherHTML is the page a browser signed in as one user gets for a
// login link of another: the link is left unused.
//
//go:embed login_other.html
var loginOtherHTML []byte

// loginRefusedHTML is the page a browser gets for a sign-in that did not
// come from the sign-in page (another site's form, a page confirmed too
// late or in another browser): the link is left unused.
//
//go:embed login_refused.html
var loginRefusedHTML []byte

// loginConfirmHTML is the sign-in page a working link opens: the account,
// the organisation, and a form that signs in.
//
//go:embed login_confirm.html
var loginConfirmHTML string

// confirmTemplate renders loginConfirmHTML; html/template escapes every
// value for where it lands (text or attribute).
var confirmTemplate = template.Must(template.New("login_confirm.html").Parse(loginConfirmHTML))

// loginPageCSP lets the pages without a form load nothing but the web
// UI's stylesheet and icon from this origin: no script, no inline style,
// no form.
const loginPageCSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// uiCSP is the web UI's policy (webui.ContentSecurityPolicy, which a test
// holds this to), sent with the sign-in page: the page loads nothing, and
// its form may post only to this origin.
const uiCSP = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// htmlPage is a login page answered with status: the UI's framing ban
// (X-Frame-Options and the policy's frame-ancestors) on every one, so no
// other site can frame the Sign in button.
func htmlPage(status int, csp string, body []byte) *loginOutput {
	return &loginOutput{
		Status: status, ContentType: "text/html; charset=utf-8",
		CSP: csp, FrameOptions: "DENY", Body: body,
	}
}

// armScript keeps the Sign in button disabled for its first moments on
// screen. Framing is already refused; this stops a page that sends the
// browser to a login link on the first click of a double-click from
// landing the second on the button. Without JavaScript the button works
// at once.
const armScript = `(function(){var b=document.getElementById("sign-in");b.disabled=true;` +
	`function arm(){if(document.visibilityState!=="visible")return;` +
	`document.removeEventListener("visibilitychange",arm);setTimeout(function(){b.disabled=false;b.dataset.armed="";},armDelayMS);}` +
	`document.addEventListener("visibilitychange",arm);arm();})();`

// armDelayMS is how long the button stays disabled once the page is
// visible: longer than a double-click, short enough to go unnoticed.
const armDelayMS = 700

// armSource is the script as served, and confirmCSP the sign-in page's
// policy: the UI's, with that one inline script allowed by its hash.
var (
	armSource  = strings.ReplaceAll(armScript, "armDelayMS", strconv.Itoa(armDelayMS))
	confirmCSP = strings.Replace(uiCSP, "script-src 'self'", "script-src 'self' '"+scriptHash(armSource)+"'", 1)
)

// scriptHash is the CSP source expression of an inline script.
func scriptHash(src string) string {
	sum := sha256.Sum256([]byte(src))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// confirmAccount is who a login link signs in, as the sign-in page names
// them: the display name and organisation, which their owners choose, and
// the account id and role, which they cannot.
type confirmAccount struct{ Name, UserID, Role, Org string }

// confirmPage renders the sign-in page for the account, with the link's
// token and the confirmation value the form echoes.
func confirmPage(a confirmAccount, token, confirm string) ([]byte, error) {
	var b bytes.Buffer
	err := confirmTemplate.Execute(&b, struct {
		confirmAccount
		Token, Confirm, ConfirmField string
		Arm                          template.JS
	}{a, token, confirm, confirmField, template.JS(armSource)})
	if err != nil {
		return nil, fmt.Errorf("render sign-in page: %w", err)
	}
	return b.Bytes(), nil
}

// documentLoginPages says in the OpenAPI document what the /login
// operations answer beyond huma's view: HTML pages with their headers, by
// the Accept header (the middleware reads it, not huma), a 303 without a
// body, and the form's fields.
func documentLoginPages(doc *huma.OpenAPI) {
	get, post := doc.Paths["/login"].Get, doc.Paths["/login"].Post
	if get == nil || post == nil {
		panic("httpapi: GET or POST /login is not registered")
	}
	str := func(doc string) *huma.Schema { return &huma.Schema{Type: huma.TypeString, Description: doc} }
	header := func() *huma.Param { return &huma.Param{Schema: str("")} }
	page := func(extra ...string) map[string]*huma.Param {
		h := map[string]*huma.Param{}
		for _, name := range append([]string{"Content-Type", "Content-Security-Policy", "X-Frame-Options"}, extra...) {
			h[name] = header()
		}
		return h
	}
	for _, op := range []*huma.Operation{get, post} {
		op.Parameters = append(op.Parameters, &huma.Param{
			Name: "Accept", In: "header", Schema: str(""),
			Description: "Preferring text/html to application/json makes a failure an HTML page.",
		})
	}
	ok := get.Responses["200"]
	ok.Headers = page("Set-Cookie")
	ok.Content = map[string]*huma.MediaType{"text/html": {Schema: str(
		"The sign-in page: who the link signs in (display name, organisation) and a Sign in button whose form " +
			"POSTs token and " + confirmField + " to /login. Sent with the web UI's Content-Security-Policy, " +
			"X-Frame-Options: DENY and Referrer-Policy: no-referrer.")}}
	redirect := post.Responses["303"]
	redirect.Headers = map[string]*huma.Param{"Location": header(), "Set-Cookie": header()}
	redirect.Content = nil
	post.RequestBody.Content = map[string]*huma.MediaType{"application/x-www-form-urlencoded": {Schema: &huma.Schema{
		Type: huma.TypeObject, Required: []string{"token", confirmField},
		Properties: map[string]*huma.Schema{
			"token":      str("The secret of the login link."),
			confirmField: str("The value of the " + loginCookie + " cookie the sign-in page set."),
		},
	}}}
	const (
		invalid = "a page saying the link is invalid, already used or expired, and how to get a new one"
		other   = "a page saying the browser is signed in as another user, so the link was left unused"
		refused = "a page saying the sign-in did not come from the sign-in page, so the link was left unused"
	)
	for _, p := range []struct {
		op           *huma.Operation
		status, what string
	}{
		{get, "401", invalid}, {get, "409", other},
		{post, "401", invalid}, {post, "403", refused}, {post, "409", other},
	} {
		r := p.op.Responses[p.status]
		if r == nil {
			panic("httpapi: " + p.op.OperationID + " lacks its " + p.status + " response")
		}
		r.Headers = page()
		r.Content["text/html"] = &huma.MediaType{Schema: str("When the Accept header prefers text/html: " + p.what + ".")}
	}
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
