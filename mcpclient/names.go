package mcpclient

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Wire names. A registered server's tool is declared to models under a
// name of its own, its wire name, made from the server's registration
// name and the tool's name on that server and from nothing else: another
// server registered later never renames it (so a provider's prompt cache
// and a stored transcript stay valid), two servers offering one tool name
// both keep it, and no tool of a server can take a built-in's name.
const (
	// MaxWireChars is the longest tool name every model provider accepts.
	MaxWireChars = 64
	// WireSeparator joins a server's part and its tool's part in a wire
	// name. A server's part neither holds it nor ends in '_', so the first
	// "__" of a wire name ends the server's part: tools of distinct
	// servers never share a wire name.
	WireSeparator = "__"
	// wireHashChars is the length of the suffix that keeps apart tool
	// names that sanitise or truncate alike.
	wireHashChars = 8
)

// WireName returns the name under which tool, a tool of the server
// registered as server, is declared to models and called back: the server
// part, "__", then the tool part. For example tool "search" of server
// "docs" is "docs__search".
//
// The result always suits every provider: 1 to 64 characters of
// [A-Za-z0-9_-], starting with a letter. It depends on its two arguments
// only, and is the same on every call.
//
// The server part is the registration name, which holds no '_'; one that
// starts with a digit is prefixed "mcp_". (A string that is not a valid
// registration name, which Add never stores, becomes "mcp_x_" and a hash of
// it.) The tool part is the tool's name when that is already made of
// [A-Za-z0-9_-] and fits; otherwise every run of other characters becomes
// one '_', the result is cut to fit, and "_" plus 8 hex digits of a SHA-256
// of the server and the original tool name is appended, so that tool names
// which sanitise or truncate alike ("a.b", "a/b", "a_b") keep apart. The
// mapping back to the tool's real name is kept beside the wire name (see
// tool.Origin), never parsed from it.
func WireName(server, tool string) string {
	prefix := serverPart(server) + WireSeparator
	room := MaxWireChars - len(prefix)
	if plainTool(tool) && len(tool) <= room {
		return prefix + tool
	}
	suffix := wireHash("tool", server, tool)
	base := sanitiseToolName(tool)
	if n := room - 1 - len(suffix); len(base) > n {
		base = strings.TrimRight(base[:n], "_")
	}
	if base == "" {
		return prefix + suffix
	}
	return prefix + base + "_" + suffix
}

// serverPart is a server's part of its tools' wire names: at most 36
// characters, starting with a letter, holding no "__" and not ending in
// '_'. Distinct registration names give distinct parts.
func serverPart(server string) string {
	switch {
	case !registrationName(server):
		return "mcp_x_" + wireHash("server", server, "")
	case isLetter(server[0]):
		return server
	}
	return "mcp_" + server // starts with a digit
}

// registrationName reports whether s matches namePattern, without a
// regular expression: WireName runs for every listed tool of every turn.
func registrationName(s string) bool {
	if len(s) == 0 || len(s) > 32 || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !isDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

// plainTool reports whether a tool name needs no sanitising: one or more
// of [A-Za-z0-9_-].
func plainTool(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !wireByte(s[i]) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func wireByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == '-' }

// sanitiseToolName replaces every run of characters outside
// [A-Za-z0-9_-] (and every byte that is not UTF-8) with one '_', and trims
// '_' from both ends. The result is ASCII, so its length in bytes is its
// length in characters.
func sanitiseToolName(tool string) string {
	var b strings.Builder
	replaced := false
	for _, r := range tool {
		switch {
		case r < 0x80 && wireByte(byte(r)):
			b.WriteByte(byte(r))
			replaced = false
		case !replaced:
			b.WriteByte('_')
			replaced = true
		}
	}
	return strings.Trim(b.String(), "_")
}

// wireHash returns the first wireHashChars hex digits of a SHA-256 of its
// arguments, each length-prefixed so that no two argument lists hash the
// same text.
func wireHash(domain, server, tool string) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "quiver-wire-name/%s/%d:%s/%d:%s", domain, len(server), server, len(tool), tool))
	return hex.EncodeToString(sum[:])[:wireHashChars]
}

// ToolName is one of a server's tools with the name models call it by.
type ToolName struct {
	// Name is the wire name.
	Name string `json:"name"`
	// Tool is the tool's name on the server.
	Tool string `json:"tool"`
}

// WireNames maps a server's discovered tool names to their wire names, in
// order. It needs no connection: a stored snapshot is enough. The result
// is nil only when tools is.
func WireNames(server string, tools []string) []ToolName {
	if tools == nil {
		return nil
	}
	out := make([]ToolName, len(tools))
	for i, t := range tools {
		out[i] = ToolName{Name: WireName(server, t), Tool: t}
	}
	return out
}

// DescribeNames describes a server's tools for people, one entry per
// tool joined by ", ": the wire name, followed by the server's name for
// it, quoted, when that is not simply the wire name's end
// ("docs__search, docs__get_page_1a2b3c4d ("get.page")"). Like Snapshot,
// it says "Discovery unknown" for nil and "None discovered" for none.
func DescribeNames(server string, tools []string) string {
	if len(tools) == 0 {
		return Snapshot(tools)
	}
	parts := make([]string, len(tools))
	for i, n := range WireNames(server, tools) {
		parts[i] = n.Name
		if !strings.HasSuffix(n.Name, WireSeparator+n.Tool) {
			parts[i] += fmt.Sprintf(" (%q)", n.Tool)
		}
	}
	return strings.Join(parts, ", ")
}
