package textproto

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/llm"
)

// chunks splits s into pieces of n bytes (the last may be shorter).
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// FuzzParse checks the parser never panics, emits only calls with JSON
// object arguments numbered in order, never gives out more than it was
// given, and parses the same however the reply is split into deltas.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.in, uint8(1))
		f.Add(tc.in, uint8(7))
	}
	f.Fuzz(func(t *testing.T, in string, size uint8) {
		p := newParser(declared)
		ps := append(p.feed(in), p.flush()...)
		out, calls := 0, 0
		for _, pc := range ps {
			if !pc.isCall {
				out += len(pc.text)
				continue
			}
			calls++
			out += pc.raw
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(pc.call.Args, &obj); err != nil || !isObject(pc.call.Args) {
				t.Errorf("call %s has arguments %q, not a JSON object: %v", pc.call.ID, pc.call.Args, err)
			}
			if want := "call_" + strconv.Itoa(calls); pc.call.ID != want || pc.call.Name == "" {
				t.Errorf("call %q named %q, want ID %s and a name", pc.call.ID, pc.call.Name, want)
			}
		}
		if out > len(in) {
			t.Errorf("gave out %d bytes of text and call blocks from %d", out, len(in))
		}
		split := parseChunks(declared, chunks(in, int(size%13)+1))
		if diff := cmp.Diff(segs(ps), split); diff != "" {
			t.Errorf("split into %d-byte deltas (-whole +split):\n%s", size%13+1, diff)
		}
	})
}

// FuzzRoundTrip checks that any calls, rendered in the protocol as history
// does, parse back to themselves: same names in the same order, arguments
// equal as JSON, numbered call_1, call_2, ….
func FuzzRoundTrip(f *testing.F) {
	f.Add("web_search", `{"query": "go"}`, "read_file", `{"path": "a", "n": [1, 2.5e3, null, true]}`, uint8(2))
	f.Add("write_file", `{"text": "</tool_call><tool_call>{\"name\":\"x\"}"}`, "web-search", "not json", uint8(1))
	f.Add("a", `{"k":"\u003c\\\"\n"}`, "é", `[]`, uint8(0))
	f.Fuzz(func(t *testing.T, name1, args1, name2, args2 string, n uint8) {
		var calls []llm.ToolCall
		for i := 0; i <= int(n%3); i++ {
			calls = appendCall(calls, name1, args1)
			calls = appendCall(calls, name2, args2)
		}
		text := callsText("", calls)
		p := newParser([]string{name1, name2})
		var ps []piece
		for _, c := range chunks(text, int(n%11)+1) {
			ps = append(ps, p.feed(c)...)
		}
		ps = append(ps, p.flush()...)
		var got []llm.ToolCall
		for _, pc := range ps {
			switch {
			case pc.isCall:
				got = append(got, pc.call)
			case pc.text != "\n":
				t.Errorf("text %q between calls", pc.text)
			}
		}
		if len(got) != len(calls) {
			t.Fatalf("parsed %d calls from %d:\n%s", len(got), len(calls), text)
		}
		for i, c := range calls {
			if id := "call_" + strconv.Itoa(i+1); got[i].ID != id || got[i].Name != c.Name {
				t.Errorf("call %d = %s %q, want %s %q", i, got[i].ID, got[i].Name, id, c.Name)
			}
			if diff := cmp.Diff(jsonValue(t, c.Args), jsonValue(t, got[i].Args)); diff != "" {
				t.Errorf("call %d arguments (-want +got):\n%s", i, diff)
			}
		}
	})
}

// appendCall adds a call named name; args are used when they are a JSON
// object, else wrapped as {"v": args}. Names a tool cannot have are skipped.
func appendCall(calls []llm.ToolCall, name, args string) []llm.ToolCall {
	if name == "" || !utf8.ValidString(name) {
		return calls
	}
	raw := json.RawMessage(args)
	if !json.Valid(raw) || !isObject(raw) {
		raw, _ = json.Marshal(map[string]string{"v": args})
	}
	return append(calls, llm.ToolCall{ID: "orig", Name: name, Args: raw})
}

func jsonValue(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("arguments %q: %v", raw, err)
	}
	return v
}
