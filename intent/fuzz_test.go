package intent_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quiverhq/quiver/intent"
)

// FuzzDetect: any message, with any earlier user message and assistant
// attachment, is detected without panicking, and the opened targets are
// valid, distinct and in Targets order, each explained by a match.
func FuzzDetect(f *testing.F) {
	for _, s := range []string{
		"remind me to call Bob at 5pm", "draw a picture of a fox", "パスワード忘れてた",
		"提醒我明天开会", "알림 해줘", "напомни мне", "15% of 80", "send it to #general",
		"do that again but angrier", "https://youtu.be/x", "\xff\xfe", "ǰ Ꮾ ꮾ ﬃ", "",
	} {
		f.Add(s, "draw a cat", true)
	}
	d := detector(f)
	custom, err := intent.CompileCustom(map[string][]string{intent.Image: {"pfp", "^"}, intent.Search: {"검색"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text, earlier string, withImage bool) {
		in := intent.Input{Text: text, HistoryTurns: 4, Custom: custom,
			History: []intent.Message{{Role: intent.RoleUser, Text: earlier}}}
		if withImage {
			in.History = append(in.History, intent.Message{Role: intent.RoleAssistant, Attachments: []string{intent.AttachImage}})
		}
		for _, in := range []intent.Input{{Text: text}, in} {
			r := d.Detect(in)
			last := -1
			for _, target := range r.Targets {
				i := slices.Index(intent.Targets, target)
				if i <= last {
					t.Fatalf("targets %v: %q unknown or out of order", r.Targets, target)
				}
				last = i
				if !slices.ContainsFunc(r.Matches, func(m intent.Match) bool { return m.Target == target }) {
					t.Fatalf("target %q has no match: %+v", target, r.Matches)
				}
			}
			for _, m := range r.Matches {
				if !r.Has(m.Target) {
					t.Fatalf("match %+v for a target not opened (%v)", m, r.Targets)
				}
			}
		}
	})
}

// FuzzNormalise: the result is valid UTF-8 and normalising it again
// changes nothing.
func FuzzNormalise(f *testing.F) {
	for _, s := range []string{
		"Hello  World", "ＲＥＭＩＮＤ　ｍｅ", "don’t", "Straße", "ǰ", "Ꮾꮾᏸ", "ﬃ", "İ", "ᾈ", "a\u0345",
		"\xff\xfe", "ｶﾞ", "nha\u0306\u0301c to\u0302i", "\u00a0\u2003tab\tnew\nline ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := intent.Normalise(s)
		if !utf8.ValidString(n) {
			t.Fatalf("Normalise(%q) = %q: invalid UTF-8", s, n)
		}
		if again := intent.Normalise(n); again != n {
			t.Fatalf("Normalise(%q) = %q, but Normalise of that = %q", s, n, again)
		}
	})
}

// FuzzParseRequest: any line is parsed or refused without panicking; a
// parsed request encodes back to one that parses to the same message and
// history, and its answer is one line of JSON holding its id.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"message":"remind me at 5pm to stretch"}`, `{"id":"x","message":"hi","history":["search the web"]}`,
		`{"message":"hi"}`, `{"id":1,"msg":"x"}`, `{"id":{"a":[1,2]},"message":"\u00e9"}`, `{"history":null}`,
		`[1]`, `null`, `{"id":1} trailing`, `{"message":"a"`, "\xff", "",
	} {
		f.Add(s)
	}
	d := detector(f)
	f.Fuzz(func(t *testing.T, line string) {
		req, err := intent.ParseRequest(line)
		if err != nil {
			return
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("%q parsed to %+v, which does not encode: %v", line, req, err)
		}
		again, err := intent.ParseRequest(string(b))
		if err != nil || again.Message != req.Message || !slices.Equal(again.History, req.History) {
			t.Fatalf("%q: re-encoded as %s, parsed to %+v, %v; want %+v", line, b, again, err, req)
		}
		var out strings.Builder
		if err := intent.AnswerLines(strings.NewReader(string(b)), &out, intent.Probe{Detector: d}.Detect); err != nil {
			t.Fatalf("answering %s: %v", b, err)
		}
		var resp intent.Response
		if strings.Count(out.String(), "\n") != 1 || json.Unmarshal([]byte(out.String()), &resp) != nil || resp.Families == nil {
			t.Fatalf("answer to %s: %q, want one line of {\"id\", \"families\"}", b, out.String())
		}
	})
}
