package textproto

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// seg is a parsed piece in a comparable form: text, or a call.
type seg struct {
	Text           string
	ID, Name, Args string
}

func txt(s string) seg               { return seg{Text: s} }
func call(id, name, args string) seg { return seg{ID: id, Name: name, Args: args} }

// parseChunks feeds chunks to a fresh parser, flushes it, and returns its
// pieces with adjacent text joined.
func parseChunks(declared []string, chunks []string) []seg {
	p := newParser(declared)
	var ps []piece
	for _, c := range chunks {
		ps = append(ps, p.feed(c)...)
	}
	return segs(append(ps, p.flush()...))
}

func segs(ps []piece) []seg {
	var out []seg
	for _, pc := range ps {
		n := len(out)
		switch {
		case pc.isCall:
			out = append(out, call(pc.call.ID, pc.call.Name, string(pc.call.Args)))
		case n > 0 && out[n-1].ID == "":
			out[n-1].Text += pc.text
		default:
			out = append(out, txt(pc.text))
		}
	}
	return out
}

// runes splits s into one chunk per character: every tag split everywhere.
func runes(s string) []string {
	var out []string
	for len(s) > 0 {
		_, n := utf8.DecodeRuneInString(s)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

var parseCases = []struct {
	name string
	in   string
	want []seg
}{
	{"plain text", "Hello, world. 2 < 3 and 5 > 4.",
		[]seg{txt("Hello, world. 2 < 3 and 5 > 4.")}},
	{"one call after text", `Let me look.<tool_call>{"name": "web_search", "arguments": {"query": "go"}}</tool_call>`,
		[]seg{txt("Let me look."), call("call_1", "web_search", `{"query":"go"}`)}},
	{"parallel calls", "<tool_call>{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}</tool_call>\n<tool_call>{\"name\":\"read_file\",\"arguments\":{\"path\":\"b\"}}</tool_call>",
		[]seg{call("call_1", "read_file", `{"path":"a"}`), txt("\n"), call("call_2", "read_file", `{"path":"b"}`)}},
	{"whitespace and newlines inside the tags", "< tool_call >\n  {\n \"name\" : \"web_search\",\n \"arguments\" : { \"query\" : \"go\" }\n}\n</ tool_call\n>",
		[]seg{call("call_1", "web_search", `{"query":"go"}`)}},
	{"tags in upper case", `<TOOL_CALL>{"name":"web_search","arguments":{}}</Tool_Call>`,
		[]seg{call("call_1", "web_search", `{}`)}},
	{"json fence inside the block", "<tool_call>\n```json\n{\"name\": \"web_search\", \"arguments\": {\"query\": \"go\"}}\n```\n</tool_call>",
		[]seg{call("call_1", "web_search", `{"query":"go"}`)}},
	{"arguments as a JSON-encoded string", `<tool_call>{"name": "web_search", "arguments": "{\"query\": \"go\",}"}</tool_call>`,
		[]seg{call("call_1", "web_search", `{"query":"go"}`)}},
	{"parameters for arguments", `<tool_call>{"name": "web_search", "parameters": {"query": "go"}}</tool_call>`,
		[]seg{call("call_1", "web_search", `{"query":"go"}`)}},
	{"args for arguments", `<tool_call>{"name": "web_search", "args": {"query": "go"}}</tool_call>`,
		[]seg{call("call_1", "web_search", `{"query":"go"}`)}},
	{"input for arguments", `<tool_call>{"name": "web_search", "input": {"query": "go"}}</tool_call>`,
		[]seg{call("call_1", "web_search", `{"query":"go"}`)}},
	{"openai function wrapper", `<tool_call>{"type": "function", "function": {"name": "web_search", "arguments": "{\"query\":\"go\"}"}}</tool_call>`,
		[]seg{call("call_1", "web_search", `{"query":"go"}`)}},
	{"missing and null arguments", `<tool_call>{"name": "web_search"}</tool_call><tool_call>{"name": "web_search", "arguments": null}</tool_call>`,
		[]seg{call("call_1", "web_search", `{}`), call("call_2", "web_search", `{}`)}},
	{"dash for underscore", `<tool_call>{"name": "Web-Search", "arguments": {}}</tool_call>`,
		[]seg{call("call_1", "web_search", `{}`)}},
	{"unknown name still a call", `<tool_call>{"name": "launch_rockets", "arguments": {}}</tool_call>`,
		[]seg{call("call_1", "launch_rockets", `{}`)}},
	{"trailing commas", "<tool_call>{\"name\": \"web_search\", \"arguments\": {\"query\": \"go\", \"tags\": [\"a\", \"b\", ], }, }</tool_call>",
		[]seg{call("call_1", "web_search", `{"query":"go","tags":["a","b"]}`)}},
	{"raw newline inside a string", "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"text\": \"a\nb\"}}</tool_call>",
		[]seg{call("call_1", "write_file", `{"text":"a\u000ab"}`)}},
	{"braces and tags in strings", `<tool_call>{"name": "write_file", "arguments": {"text": "} ] { [ \" \\ <b>"}}</tool_call>`,
		[]seg{call("call_1", "write_file", `{"text":"} ] { [ \" \\ <b>"}`)}},
	{"truncated in a string", `Searching.<tool_call>{"name": "web_search", "arguments": {"query": "golang gener`,
		[]seg{txt("Searching."), call("call_1", "web_search", `{"query":"golang gener"}`)}},
	{"truncated after a comma", "<tool_call>{\"name\": \"web_search\", \"arguments\": {\"query\": \"go\",\n",
		[]seg{call("call_1", "web_search", `{"query":"go"}`)}},
	{"truncated mid escape", `<tool_call>{"name": "web_search", "arguments": {"query": "a\u00`,
		[]seg{call("call_1", "web_search", `{"query":"a"}`)}},
	{"truncated beyond repair", `Searching.<tool_call>{"name": "web_search", "argu`,
		[]seg{txt("Searching.")}},
	{"truncated in the name", `Searching.<tool_call>{"name": "web_sea`,
		[]seg{txt("Searching.")}},
	{"truncated in a nested name", `<tool_call>{"name": "write_file", "arguments": {"name": "notes.t`,
		[]seg{call("call_1", "write_file", `{"name":"notes.t"}`)}},
	{"truncated in a literal", `<tool_call>{"name": "web_search", "arguments": {"all": tr`,
		nil},
	{"truncated right after the tag", "Searching.\n<tool_call>\n",
		[]seg{txt("Searching.\n")}},
	{"truncated in a fence", "<tool_call>```js",
		nil},
	{"closing tag missing before the next block", `<tool_call>{"name": "read_file", "arguments": {"path": "a"}}` + "\n" + `<tool_call>{"name": "read_file", "arguments": {"path": "b"}}</tool_call>`,
		[]seg{call("call_1", "read_file", `{"path":"a"}`), call("call_2", "read_file", `{"path":"b"}`)}},
	{"broken block before the next block", `<tool_call>{"name": "read_fi<tool_call>{"name": "read_file", "arguments": {"path": "b"}}</tool_call>`,
		[]seg{call("call_1", "read_file", `{"path":"b"}`)}},
	{"mentions the word", "The tool_call syntax is documented; see tool_call.",
		[]seg{txt("The tool_call syntax is documented; see tool_call.")}},
	{"mentions the tag in prose", "Wrap each call in a <tool_call> tag, then </tool_call>.",
		[]seg{txt("Wrap each call in a <tool_call> tag, then </tool_call>.")}},
	{"mentions the tag in code", "Write `<tool_call>` first.",
		[]seg{txt("Write `<tool_call>` first.")}},
	{"closing tag without an opening", "Done.</tool_call> Bye.",
		[]seg{txt("Done.</tool_call> Bye.")}},
	{"similar tags are text", "<tool_calls>x</tool_calls><tool_call_x>",
		[]seg{txt("<tool_calls>x</tool_calls><tool_call_x>")}},
	{"complete block with no call", `<tool_call>{"tool": "web_search"}</tool_call> ok`,
		[]seg{txt(`<tool_call>{"tool": "web_search"}</tool_call> ok`)}},
	{"arguments not an object", `<tool_call>{"name": "web_search", "arguments": ["go"]}</tool_call>`,
		[]seg{txt(`<tool_call>{"name": "web_search", "arguments": ["go"]}</tool_call>`)}},
	{"tag followed by pages of blanks", "<tool_call>" + strings.Repeat(" ", 300) + `{"name": "clock"}</tool_call>`,
		[]seg{txt("<tool_call>" + strings.Repeat(" ", 300) + `{"name": "clock"}</tool_call>`)}},
	{"empty block", "<tool_call></tool_call>",
		[]seg{txt("<tool_call></tool_call>")}},
	{"doubled opening tag", `<tool_call><tool_call>{"name": "web_search"}</tool_call>`,
		[]seg{txt("<tool_call>"), call("call_1", "web_search", `{}`)}},
	{"call after a final answer", `The answer is 42.` + "\n\n" + `<tool_call>{"name": "web_search", "arguments": {"query": "42"}}</tool_call>`,
		[]seg{txt("The answer is 42.\n\n"), call("call_1", "web_search", `{"query":"42"}`)}},
	{"text after the call", `<tool_call>{"name": "web_search", "arguments": {}}</tool_call> I will wait.`,
		[]seg{call("call_1", "web_search", `{}`), txt(" I will wait.")}},
	{"partial tag at the end is text", "All done <tool_ca",
		[]seg{txt("All done <tool_ca")}},
	{"junk after the object", "<tool_call>{\"name\": \"web_search\"} trailing words</tool_call>",
		[]seg{call("call_1", "web_search", `{}`)}},
	{"non-ascii text", "Voilà — 検索します。<tool_call>{\"name\": \"web_search\", \"arguments\": {\"query\": \"東京\"}}</tool_call>",
		[]seg{txt("Voilà — 検索します。"), call("call_1", "web_search", `{"query":"東京"}`)}},
}

var declared = []string{"web_search", "read_file", "write_file"}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			splits := map[string][]string{
				"whole":        {tc.in},
				"one char":     runes(tc.in),
				"two halves":   {tc.in[:len(tc.in)/2], tc.in[len(tc.in)/2:]},
				"empty deltas": {"", tc.in, ""},
			}
			for how, chunks := range splits {
				if diff := cmp.Diff(tc.want, parseChunks(declared, chunks)); diff != "" {
					t.Errorf("%s: pieces (-want +got):\n%s", how, diff)
				}
			}
		})
	}
}

// TestParseStreamsText checks text comes out as it arrives, holding back
// only what may be the start of a tag.
func TestParseStreamsText(t *testing.T) {
	p := newParser(nil)
	steps := []struct{ in, want string }{
		{"Hello ", "Hello "},
		{"a < b", "a < b"},
		{" <", " "},
		{"tool", ""},
		{"s are great", "<tools are great"},
		{" <tool_call", " "},
		{">{\"name\"", ""},
	}
	for _, s := range steps {
		var got strings.Builder
		for _, pc := range p.feed(s.in) {
			if pc.isCall {
				t.Fatalf("feed(%q): unexpected call %v", s.in, pc.call)
			}
			got.WriteString(pc.text)
		}
		if got.String() != s.want {
			t.Errorf("feed(%q) gave %q, want %q", s.in, got.String(), s.want)
		}
	}
}

// TestParseLongBlock checks a long block streamed in small deltas is not
// rescanned from its start on every delta.
func TestParseLongBlock(t *testing.T) {
	p := newParser(nil)
	p.feed(`<tool_call>{"name": "write_file", "arguments": {"text": "`)
	body := strings.Repeat("abcdefgh", 1<<15)
	for i := 0; i < len(body); i += 4 {
		if out := p.feed(body[i : i+4]); len(out) != 0 {
			t.Fatalf("feed gave %v inside a block", out)
		}
		if p.from < len(p.buf)-4 {
			t.Fatalf("search restarts at %d of %d", p.from, len(p.buf))
		}
	}
	got := segs(p.feed(`"}}</tool_call>`))
	want := []seg{call("call_1", "write_file", `{"text":"`+body+`"}`)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseIDsAcrossFlush(t *testing.T) {
	p := newParser(nil)
	a := segs(append(p.feed(`<tool_call>{"name":"a"}</tool_call>`), p.flush()...))
	b := segs(append(p.feed(`<tool_call>{"name":"b"}`), p.flush()...))
	want := []seg{call("call_1", "a", "{}"), call("call_2", "b", "{}")}
	if diff := cmp.Diff(want, append(a, b...)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestResolveNames(t *testing.T) {
	ns := newNames([]string{"web_search", "read-file", "read_file"})
	for in, want := range map[string]string{
		"web_search":   "web_search",
		"web-search":   "web_search",
		" WEB_SEARCH ": "web_search",
		"read-file":    "read-file",
		"read_file":    "read_file",
		"Read-File":    "read-file", // the first declared wins a tie
		"unknown-tool": "unknown-tool",
	} {
		if got := ns.resolve(in); got != want {
			t.Errorf("resolve(%q) = %q, want %q", in, got, want)
		}
	}
}
