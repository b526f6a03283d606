package mcpclient

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

const secretToken = "s3cr3t-T0KEN-value"

func TestNormalise(t *testing.T) {
	long := func(n int) string { return "http://example.com/" + strings.Repeat("a", n-len("http://example.com/")) }
	tests := []struct {
		name    string
		in      Registration
		want    Registration // compared when wantErr is ""
		wantErr string
	}{
		{name: "plain", in: Registration{Name: "search", URL: "https://example.com/mcp"},
			want: Registration{Name: "search", URL: "https://example.com/mcp", Type: "general"}},
		{name: "inner whitespace becomes hyphens", in: Registration{Name: "  my \t search  server ", URL: " https://example.com/mcp "},
			want: Registration{Name: "my-search-server", URL: "https://example.com/mcp", Type: "general"}},
		{name: "32 characters", in: Registration{Name: strings.Repeat("a", 32), URL: "https://example.com"},
			want: Registration{Name: strings.Repeat("a", 32), URL: "https://example.com", Type: "general"}},
		{name: "33 characters", in: Registration{Name: strings.Repeat("a", 33), URL: "https://example.com"}, wantErr: "name:"},
		{name: "empty name", in: Registration{Name: "  ", URL: "https://example.com"}, wantErr: "name:"},
		{name: "leading hyphen", in: Registration{Name: "-x", URL: "https://example.com"}, wantErr: "name:"},
		{name: "underscore", in: Registration{Name: "a_b", URL: "https://example.com"}, wantErr: "name:"},
		{name: "non-ASCII", in: Registration{Name: "tìm-kiếm", URL: "https://example.com"}, wantErr: "name:"},
		{name: "slash", in: Registration{Name: "a/b", URL: "https://example.com"}, wantErr: "name:"},
		{name: "no URL", in: Registration{Name: "a"}, wantErr: "url: required"},
		{name: "URL of 500", in: Registration{Name: "a", URL: long(500)},
			want: Registration{Name: "a", URL: long(500), Type: "general"}},
		{name: "URL of 501", in: Registration{Name: "a", URL: long(501)}, wantErr: "url: at most 500 characters"},
		{name: "ftp", in: Registration{Name: "a", URL: "ftp://example.com/"}, wantErr: "url: give an http or https URL"},
		{name: "no host", in: Registration{Name: "a", URL: "https:///mcp"}, wantErr: "url: give an http or https URL"},
		{name: "relative", in: Registration{Name: "a", URL: "example.com/mcp"}, wantErr: "url: give an http or https URL"},
		{name: "credentials in URL", in: Registration{Name: "a", URL: "https://user:pw@example.com/"}, wantErr: "url: credentials"},
		{name: "fragment", in: Registration{Name: "a", URL: "https://example.com/#x"}, wantErr: "url: remove the #fragment"},
		{name: "token trimmed", in: Registration{Name: "a", URL: "https://example.com", Token: "  " + secretToken + "\n"},
			want: Registration{Name: "a", URL: "https://example.com", Token: secretToken, Type: "general"}},
		{name: "token of 500", in: Registration{Name: "a", URL: "https://example.com", Token: strings.Repeat("t", 500)},
			want: Registration{Name: "a", URL: "https://example.com", Token: strings.Repeat("t", 500), Type: "general"}},
		{name: "token of 501", in: Registration{Name: "a", URL: "https://example.com", Token: strings.Repeat("t", 501)}, wantErr: "token: at most 500 characters"},
		{name: "token of 500 runes, more bytes", in: Registration{Name: "a", URL: "https://example.com", Token: strings.Repeat("é", 500)},
			want: Registration{Name: "a", URL: "https://example.com", Token: strings.Repeat("é", 500), Type: "general"}},
		{name: "two-line token", in: Registration{Name: "a", URL: "https://example.com", Token: secretToken + "\n" + secretToken}, wantErr: "token: must be one line"},
		{name: "carriage return", in: Registration{Name: "a", URL: "https://example.com", Token: secretToken + "\rX"}, wantErr: "token: must be one line"},
		{name: "type web_search any case", in: Registration{Name: "a", URL: "https://example.com", Type: " Web_Search "},
			want: Registration{Name: "a", URL: "https://example.com", Type: "web_search"}},
		{name: "type url_fetcher", in: Registration{Name: "a", URL: "https://example.com", Type: "url_fetcher"},
			want: Registration{Name: "a", URL: "https://example.com", Type: "url_fetcher"}},
		{name: "type none", in: Registration{Name: "a", URL: "https://example.com", Type: "none"},
			want: Registration{Name: "a", URL: "https://example.com", Type: "general"}},
		{name: "unknown type", in: Registration{Name: "a", URL: "https://example.com", Type: "search"}, wantErr: `type "search"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.normalise()
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("normalise(%+v) = %+v, want error %q", tc.in, got, tc.wantErr)
				}
				wantContains(t, "error", err.Error(), tc.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("normalise: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("normalise (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNormaliseNeverEchoesToken puts the token beside every kind of
// invalid field, and an invalid token itself, and looks for it in the
// messages.
func TestNormaliseNeverEchoesToken(t *testing.T) {
	bad := []Registration{
		{Name: "", URL: "https://example.com", Token: secretToken},
		{Name: secretToken + "/x", URL: "https://example.com", Token: secretToken},
		{Name: "a", URL: "", Token: secretToken},
		{Name: "a", URL: "ftp://" + secretToken, Token: secretToken},
		{Name: "a", URL: "https://example.com", Token: strings.Repeat(secretToken, 30)},
		{Name: "a", URL: "https://example.com", Token: secretToken + "\n" + secretToken},
		{Name: "a", URL: "https://example.com", Token: secretToken, Type: "bogus"},
	}
	for _, r := range bad {
		_, err := r.normalise()
		if err == nil {
			t.Errorf("normalise(%q) accepted an invalid registration", r.Name)
			continue
		}
		wantNotContains(t, "error", err.Error(), secretToken)
	}
}

func TestParseType(t *testing.T) {
	for in, want := range map[string]string{"": "general", "General": "general", "none": "general", "web_search": "web_search", "URL_FETCHER": "url_fetcher"} {
		got, err := ParseType(in)
		if err != nil || got != want {
			t.Errorf("ParseType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseType("web-search"); err == nil {
		t.Error(`ParseType("web-search") accepted`)
	}
}

func TestSnapshot(t *testing.T) {
	tests := []struct {
		tools []string
		want  string
	}{
		{nil, "Discovery unknown"},
		{[]string{}, "None discovered"},
		{[]string{"echo"}, "echo"},
		{[]string{"echo", "get-sum"}, "echo, get-sum"},
	}
	for _, tc := range tests {
		if got := Snapshot(tc.tools); got != tc.want {
			t.Errorf("Snapshot(%#v) = %q, want %q", tc.tools, got, tc.want)
		}
	}
}

func TestBoundSnapshot(t *testing.T) {
	var names []string
	for i := range 150 {
		names = append(names, strings.Repeat("n", 120)+strings.Repeat("é", i%20))
	}
	got := boundSnapshot(names)
	if len(got) != MaxSnapshotNames {
		t.Fatalf("kept %d names, want %d", len(got), MaxSnapshotNames)
	}
	for i, n := range got {
		if utf8.RuneCountInString(n) > MaxSnapshotNameChars || !utf8.ValidString(n) {
			t.Fatalf("name %d has %d characters (valid UTF-8: %v)", i, utf8.RuneCountInString(n), utf8.ValidString(n))
		}
		if !strings.HasPrefix(names[i], n) {
			t.Fatalf("name %d = %q is not a prefix of %q", i, n, names[i])
		}
	}
	if got := boundSnapshot([]string{"nul\x00name", "bad\xffname"}); !slices.Equal(got, []string{"nul name", "bad\uFFFDname"}) {
		t.Errorf("boundSnapshot of unstorable names = %q", got)
	}
	if got := boundSnapshot(nil); got == nil || len(got) != 0 {
		t.Errorf("boundSnapshot(nil) = %#v, want an empty non-nil slice (a discovery that found none)", got)
	}
}

func TestOrigin(t *testing.T) {
	tests := map[string]string{
		"https://example.com/mcp?key=abc":   "https://example.com",
		"https://example.com:443/mcp":       "https://example.com",
		"http://example.com:80/":            "http://example.com",
		"https://example.com:8443/x":        "https://example.com:8443",
		"http://127.0.0.1:9000/mcp":         "http://127.0.0.1:9000",
		"http://[::1]:9000/mcp":             "http://[::1]:9000",
		"https://user:pw@example.com/x?y=z": "https://example.com",
		"https://example.com/a#frag":        "https://example.com",
		"not a url":                         "(invalid URL)",
		"":                                  "(invalid URL)",
	}
	for in, want := range tests {
		if got := Origin(in); got != want {
			t.Errorf("Origin(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSanitise(t *testing.T) {
	raw := "http://127.0.0.1:9000/mcp/private-path?key=q1"
	tests := []struct {
		name  string
		err   string
		want  string
		token string
	}{
		{name: "registered URL reduced to origin",
			err:  `Post "` + raw + `": dial tcp 127.0.0.1:9000: connect: connection refused`,
			want: `Post "http://127.0.0.1:9000": dial tcp 127.0.0.1:9000: connect: connection refused`},
		{name: "token redacted", token: secretToken,
			err:  "failed to decode response: Bearer " + secretToken + " is not valid",
			want: "failed to decode response: Bearer [redacted] is not valid"},
		{name: "other URLs reduced, trailing punctuation kept",
			err:  "see https://other.example:8443/a/b?c=d. and (http://x.example/p)",
			want: "see https://other.example:8443. and (http://x.example)"},
		{name: "cut-off token redacted", token: secretToken,
			err:  "invalid character 'u': unauthorised: Bearer s3cr3t-T0KE...",
			want: "invalid character 'u': unauthorised: Bearer [redacted]..."},
		{name: "short token redacted", token: "abc",
			err:  "token abc rejected",
			want: "token [redacted] rejected"},
		{name: "invalid UTF-8 replaced", err: "bad \xff byte", want: "bad \uFFFD byte"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sanitise(errors.New(tc.err), raw, tc.token)
			if got != tc.want {
				t.Errorf("sanitise = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("capped at 500 characters", func(t *testing.T) {
		got := sanitise(errors.New(strings.Repeat("é", 2000)), raw, "")
		if n := utf8.RuneCountInString(got); n != maxErrorChars || !strings.HasSuffix(got, "…") {
			t.Errorf("sanitised %d characters ending %q, want %d ending with …", n, got[len(got)-8:], maxErrorChars)
		}
	})
}

// FuzzSanitise checks sanitise's promises on any message: the token never
// survives, no path or query of the registered URL survives, the result is
// valid UTF-8 of at most 500 characters.
func FuzzSanitise(f *testing.F) {
	f.Add("Post \"http://h.example:8080/p?q=1\": EOF", "http://h.example:8080/p?q=1", "tok")
	f.Add("Bearer abc123 rejected", "https://h.example/mcp", "abc123")
	f.Add(strings.Repeat("x", 600), "https://h.example", "")
	f.Add("\xff\xfe", "http://[::1]:1/a", "\xff")
	f.Fuzz(func(t *testing.T, msg, raw, token string) {
		if strings.TrimSpace(token) != token || strings.ContainsAny(token, "\r\n") || !utf8.ValidString(token) {
			return // normalise never lets such a token through
		}
		got := sanitise(errors.New(msg), raw, token)
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > maxErrorChars {
			t.Fatalf("sanitise gave %d characters, valid UTF-8 %v", utf8.RuneCountInString(got), utf8.ValidString(got))
		}
		// Neither the token nor its first characters may survive, unless
		// the text sanitise itself writes contains them.
		if len(token) < 8 || strings.Contains(raw, token[:minTokenPrefix]) ||
			strings.Contains("[redacted]…(invalid URL)", token[:minTokenPrefix]) {
			return
		}
		if strings.Contains(got, token[:minTokenPrefix]) {
			t.Fatalf("the start of token %q survives in %q", token, got)
		}
	})
}

// FuzzNormalise checks that a registration normalise accepts is in stored
// form (normalising it again changes nothing) and that a refusal never
// carries a valid token.
func FuzzNormalise(f *testing.F) {
	f.Add("my server", "https://example.com/mcp", "tok", "web_search")
	f.Add("a", "http://[::1]:8080/x?y=1", "", "")
	f.Add("-bad", "ftp://x", "two\nlines", "bogus")
	f.Add(strings.Repeat("n", 40), "https://u:p@h/", strings.Repeat("t", 501), "url_fetcher")
	f.Fuzz(func(t *testing.T, name, rawURL, token, typ string) {
		r, err := Registration{Name: name, URL: rawURL, Token: token, Type: typ}.normalise()
		if err != nil {
			tok := strings.TrimSpace(token)
			if len(tok) >= 8 && !strings.Contains(name+rawURL+typ, tok) && strings.Contains(err.Error(), tok) {
				t.Fatalf("refusal %q carries the token", err)
			}
			return
		}
		again, err := r.normalise()
		if err != nil || again != r {
			t.Fatalf("normalise not idempotent: %+v then %+v, %v", r, again, err)
		}
		if !namePattern.MatchString(r.Name) || utf8.RuneCountInString(r.URL) > MaxURLChars || utf8.RuneCountInString(r.Token) > MaxTokenChars {
			t.Fatalf("accepted %+v", r)
		}
	})
}
