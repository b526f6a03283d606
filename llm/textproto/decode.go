package textproto

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// argKeys are the keys models put a call's arguments under, by preference.
var argKeys = []string{"arguments", "parameters", "args", "input"}

// decodeCall reads a call from a block's body: the first JSON object in
// it, repaired. ok is false when there is no object, no name, arguments
// that are not an object, or a name cut short by the end of the body (the
// model meant some other tool).
func decodeCall(body []byte) (name string, args json.RawMessage, ok bool) {
	name, args, cut, ok := decodeWith(body, "")
	if ok && cut {
		// Close the cut string with a mark: if the name carries it, the
		// name is the string that was cut.
		marked, _, _, _ := decodeWith(body, cutMark)
		ok = marked == name
	}
	return name, args, ok
}

// cutMark ends a string cut short, in decodeCall's check; NUL is no tool
// name's last character.
const cutMark = `\u0000`

// decodeWith repairs body, ending a cut string with mark, and reads the
// call. cut reports a string was cut.
func decodeWith(body []byte, mark string) (name string, args json.RawMessage, cut, ok bool) {
	obj, cut, ok := repair(body, mark)
	if !ok {
		return "", nil, false, false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(obj, &fields) != nil {
		return "", nil, false, false
	}
	name, args, ok = callFields(fields, true)
	return name, args, cut, ok
}

// callFields reads the name and arguments of a decoded call object. In an
// OpenAI-style {"type": "function", "function": {...}} the inner object is
// the call, when nested is set.
func callFields(fields map[string]json.RawMessage, nested bool) (string, json.RawMessage, bool) {
	if fn, ok := fields["function"]; ok && nested && isObject(fn) {
		var inner map[string]json.RawMessage
		if json.Unmarshal(fn, &inner) == nil {
			return callFields(inner, false)
		}
	}
	var name string
	if json.Unmarshal(fields["name"], &name) != nil || name == "" {
		return "", nil, false
	}
	for _, k := range argKeys {
		if raw, ok := fields[k]; ok {
			args, ok := argsValue(raw)
			return name, args, ok
		}
	}
	return name, json.RawMessage("{}"), true
}

// argsValue reads arguments given as an object, as a JSON-encoded string
// holding one, or as null (none). The result is compact.
func argsValue(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	switch {
	case string(raw) == "null":
		return json.RawMessage("{}"), true
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		if len(bytes.TrimSpace([]byte(s))) == 0 {
			return json.RawMessage("{}"), true
		}
		obj, _, ok := repair([]byte(s), "")
		if !ok {
			return nil, false
		}
		raw = obj
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil || !isObject(b.Bytes()) {
		return nil, false
	}
	return b.Bytes(), true
}

func isObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// repair returns the first JSON object in s made valid where model mess
// allows: trailing commas dropped, raw control characters in strings
// escaped, and, when s ends inside the object, a dangling escape dropped
// and open strings and brackets closed. Text after the object (a closing
// fence) is ignored. A string cut short ends with mark (JSON text) and
// cut is set. ok is false when no valid object results.
func repair(s []byte, mark string) (obj []byte, cut, ok bool) {
	start := bytes.IndexByte(s, '{')
	if start < 0 {
		return nil, false, false
	}
	r := repairer{out: make([]byte, 0, len(s)-start+8)}
	for _, c := range s[start:] {
		if done, ok := r.add(c); !ok {
			return nil, false, false
		} else if done {
			return r.out, false, json.Valid(r.out)
		}
	}
	cut = r.complete(mark)
	return r.out, cut, json.Valid(r.out)
}

// repairer copies a JSON object byte by byte, tracking strings and
// brackets so it can fix the object as it goes and close it at the end.
type repairer struct {
	out      []byte
	closers  []byte // the brackets to close, innermost last
	inString bool
	escape   bool // the previous byte began an escape
	hex      int  // hex digits still due in a \u escape
	escStart int  // where in out the escape in progress began
}

// add copies c. done reports the object closed; ok false a bracket that
// closes something never opened.
func (r *repairer) add(c byte) (done, ok bool) {
	if r.inString {
		r.addString(c)
		return false, true
	}
	switch c {
	case '"':
		r.inString = true
	case '{':
		r.closers = append(r.closers, '}')
	case '[':
		r.closers = append(r.closers, ']')
	case '}', ']':
		n := len(r.closers)
		if n == 0 || r.closers[n-1] != c {
			return false, false
		}
		r.closers = r.closers[:n-1]
		r.out = append(trimComma(r.out), c)
		return n == 1, true
	}
	r.out = append(r.out, c)
	return false, true
}

func (r *repairer) addString(c byte) {
	switch {
	case r.hex > 0:
		r.hex--
	case r.escape:
		r.escape = false
		if c == 'u' {
			r.hex = 4
		}
	case c == '\\':
		r.escape, r.escStart = true, len(r.out)
	case c == '"':
		r.inString = false
	case c < 0x20:
		r.out = fmt.Appendf(r.out, `\u%04x`, c)
		return
	}
	r.out = append(r.out, c)
}

// complete closes what the input left open, ending an open string with
// mark; cut reports there was one.
func (r *repairer) complete(mark string) (cut bool) {
	if r.inString {
		if r.escape || r.hex > 0 {
			r.out = r.out[:r.escStart]
		}
		r.out = append(append(r.out, mark...), '"')
		r.inString, cut = false, true
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.out = append(trimComma(r.out), r.closers[i])
	}
	r.closers = nil
	return cut
}

// trimComma drops trailing whitespace and one trailing comma. It is only
// called at a structural position, where out cannot end inside a string.
func trimComma(out []byte) []byte {
	out = bytes.TrimRight(out, " \t\r\n")
	if n := len(out); n > 0 && out[n-1] == ',' {
		out = out[:n-1]
	}
	return out
}
