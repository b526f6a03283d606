package registry

import (
	"fmt"
	"slices"
	"strings"
)

// Warning is one allowlist entry that admits nothing, or nothing more (a
// name no tool or family has, a server the organisation has not
// registered, an entry given twice), or one switch that changes nothing
// (Field "switches"). A warning never stops an agent from being saved or
// run; the entry just does nothing.
type Warning struct {
	// Field is the part of the agent the warning is about: "" for the
	// tools allowlist, "switches" for a switch (see CheckSwitches).
	Field string `json:"field,omitempty"`
	// Entry is the allowlist entry (or switch name) as written.
	Entry string `json:"entry"`
	// Message says what is wrong with the entry, naming it.
	Message string `json:"message"`
	// Suggestion is the closest entry that would name something
	// ("web_search" for "web_serch"); "" when nothing is close.
	Suggestion string `json:"suggestion,omitempty"`
}

// String is the warning on one line, with its suggestion.
func (w Warning) String() string {
	if w.Suggestion == "" {
		return w.Message
	}
	return fmt.Sprintf("%s; did you mean %q?", w.Message, w.Suggestion)
}

// RegisteredServers is what [Catalog.CheckAllowlist] knows of an
// organisation's registered MCP servers: each server's name, with the tool
// names of its last successful discovery (nil when none succeeded yet, so
// entries naming one of its tools are not checked). A nil map means the
// registrations are unknown and no "server/…" entry is checked; an empty
// one, that the organisation has registered none.
type RegisteredServers map[string][]string

// maxSuggestRunes bounds the entries a suggestion is looked for: an edit
// distance costs the product of the two lengths, and no name is longer.
const maxSuggestRunes = 128

// CheckAllowlist returns a warning for each entry of allow that admits no
// tool, in allow's order, and nil when every entry does. A bare entry
// must be the name or family of one of c's tools (pass the built-in
// catalog: an MCP server's tools are named "server/tool" or "server/*",
// never by their bare names); a "server/tool" or "server/*" entry must
// name a server in servers and, when its discovery is known, one of its
// tools. An entry given again is a warning on the repetition only. Each
// unknown name comes with the closest known one within a small edit
// distance, if any. CheckAllowlist never fails and does not change c.
func (c *Catalog) CheckAllowlist(allow []string, servers RegisteredServers) []Warning {
	known := c.entryNames()
	var out []Warning
	seen := make(map[string]bool, len(allow))
	for _, e := range allow {
		if seen[e] {
			out = append(out, Warning{Entry: e, Message: fmt.Sprintf("%q is listed more than once", e)})
			continue
		}
		seen[e] = true
		server, name, isMCP := strings.Cut(e, "/")
		var w *Warning
		if isMCP {
			w = checkMCPEntry(e, server, name, servers)
		} else {
			w = checkBareEntry(e, known, servers)
		}
		if w != nil {
			out = append(out, *w)
		}
	}
	return out
}

// CheckAgent returns the warnings of an agent's allowlist and switches:
// CheckAllowlist's for allow against servers, in allow's order, then
// CheckSwitches' for switches; nil when both are clean. It never fails
// and does not change c.
func (c *Catalog) CheckAgent(allow []string, servers RegisteredServers, switches map[string]bool) []Warning {
	return append(c.CheckAllowlist(allow, servers), c.CheckSwitches(switches)...)
}

// NamesServers reports whether allow has an MCP server's entry
// ("server/tool" or "server/*"): one that only the organisation's
// registrations can check (see RegisteredServers).
func NamesServers(allow []string) bool {
	for _, e := range allow {
		if strings.Contains(e, "/") {
			return true
		}
	}
	return false
}

// entryNames returns the bare names an allowlist may use: every tool's
// name and family, in registration order, once each. Tools that are
// admitted only by their AllowAs entries (an MCP server's) are left out.
func (c *Catalog) entryNames() []string {
	var names []string
	for _, t := range c.tools {
		spec := t.Spec()
		if len(spec.AllowAs) > 0 {
			continue
		}
		for _, n := range []string{spec.Name, spec.Family} {
			if n != "" && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// checkBareEntry warns about a name no tool or family has; a name that is
// a registered server's is pointed at its "server/*" entry.
func checkBareEntry(e string, known []string, servers RegisteredServers) *Warning {
	if slices.Contains(known, e) {
		return nil
	}
	w := &Warning{Entry: e, Message: fmt.Sprintf("%q is not a tool or family name", e)}
	if _, ok := servers[e]; ok {
		w.Message = fmt.Sprintf("%q is an MCP server, not a tool or family name", e)
		w.Suggestion = e + "/*"
		return w
	}
	w.Suggestion = closest(e, known)
	return w
}

// checkMCPEntry warns about "server/name" when the server is not
// registered, or its known discovery has no tool of that name.
func checkMCPEntry(e, server, name string, servers RegisteredServers) *Warning {
	if servers == nil {
		return nil
	}
	tools, ok := servers[server]
	if !ok {
		w := &Warning{Entry: e, Message: fmt.Sprintf("no MCP server %q is registered in this organisation", server)}
		if s := closest(server, sortedKeys(servers)); s != "" {
			// The tool part may be misspelt too: suggest only an entry
			// that names something.
			w.Suggestion = s + "/" + name
			if again := checkMCPEntry(w.Suggestion, s, name, servers); again != nil {
				w.Suggestion = again.Suggestion
			}
		}
		return w
	}
	if name == "*" || tools == nil || slices.Contains(tools, name) {
		return nil
	}
	w := &Warning{Entry: e, Message: fmt.Sprintf("MCP server %q had no tool %q at its last discovery", server, name)}
	if s := closest(name, tools); s != "" {
		w.Suggestion = server + "/" + s
	}
	return w
}

func sortedKeys(m RegisteredServers) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// closest returns the candidate nearest to s by edit distance (adjacent
// transpositions count as one edit), the first of equals, when it is
// within maxDistance of s; else "".
func closest(s string, candidates []string) string {
	rs := []rune(s)
	if len(rs) == 0 || len(rs) > maxSuggestRunes {
		return ""
	}
	best, bestD := "", maxDistance(len(rs))+1
	for _, c := range candidates {
		rc := []rune(c)
		if len(rc) > maxSuggestRunes || c == s {
			continue
		}
		if d := editDistance(rs, rc); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// maxDistance is how many edits still make a name "close" to one of n
// characters: one for short names, up to three for long ones.
func maxDistance(n int) int {
	switch {
	case n <= 4:
		return 1
	case n <= 8:
		return 2
	}
	return 3
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of adjacent
// runes, each one edit.
func editDistance(a, b []rune) int {
	// Three rows: two back (for transpositions), previous and current.
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
