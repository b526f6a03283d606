package mcpclient

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// researchTool is the built-in that searches and reads with the built-in
// engines: a replacement of either hides it too.
const researchTool = "research_web"

// GeneralFamilyPrefix starts the family of a general server's tools:
// "mcp:<server>".
const GeneralFamilyPrefix = "mcp:"

// replacement describes the built-in tool a typed server stands in for.
type replacement struct {
	builtin string // the built-in tool's name, hidden while the server is enabled
	family  string // the built-in's family, given to the server's tools
}

var replacements = map[string]replacement{
	store.MCPWebSearch:  {builtin: "web_search", family: "web_search"},
	store.MCPURLFetcher: {builtin: "fetch_url", family: "url_fetch"},
}

// serverState is an enabled registration and its connection this turn.
type serverState struct {
	reg   store.MCPServer
	conn  *Conn  // nil when unavailable
	cause string // why it is unavailable, sanitised
	// tools is the connection's tool list, read once for the whole
	// routing: another turn may refresh the connection's list meanwhile.
	tools []*mcp.Tool
}

// routed is one turn's view of an organisation's servers.
type routed struct {
	overlay registry.Overlay
	// notices are problems an admin should fix (two enabled servers of one
	// family), one line each.
	notices []string
}

// route decides which listed tools a turn may be offered, and which
// built-ins they replace. Every tool is offered under its wire name
// (WireName), so no two servers compete for a name and no server's tool
// for a built-in's. base is the built-in catalog. imp builds a tool for
// one server's listed tool.
func route(states []serverState, base *registry.Catalog, imp importer) routed {
	var r routed
	r.overlay.Hide = map[string]string{}
	states = slices.Clone(states)
	for i := range states {
		if states[i].conn != nil && states[i].tools == nil {
			states[i].tools = states[i].conn.Tools()
		}
	}
	skip := familyConflicts(states, &r)
	taken := map[string]string{} // wire name → the server/tool imported under it
	for _, st := range states {
		if skip[st.reg.ID] {
			continue
		}
		rep, typed := replacements[st.reg.Type]
		if typed {
			reason := "replaced by MCP server " + st.reg.Name
			if st.conn == nil {
				reason += ", which is unavailable"
			}
			r.overlay.Hide[rep.builtin] = reason
			// research_web searches and reads with the built-ins; it
			// would go around the replacement.
			r.overlay.Hide[researchTool] = reason + " (research_web uses the built-in search and reader)"
		}
		if st.conn == nil {
			r.overlay.Dropped = append(r.overlay.Dropped, registry.Exclusion{
				Name: st.reg.Name + "/*", Reason: "MCP server unavailable: " + st.cause,
			})
			continue
		}
		r.importServer(st, base, taken, imp)
	}
	return r
}

// importer builds the tool for one listed tool of a server. inherit is
// the spec of the built-in a typed server replaces (zero for a general
// server): its requirement and prompt fragments carry over, so a
// replacement is left out where the built-in would be and brings the
// built-in's rules (that search results and pages are untrusted).
type importer func(st serverState, t mcpTool, family string, macros []string, inherit tool.Spec) (*tool.Tool, error)

// importServer adds a connected server's tools to the overlay, each name
// once, in listing order. A general server's tools get a family of their
// own, "mcp:<server>", so a server cannot claim a built-in family
// ("workspace"); a typed server's take the family of the built-in they
// replace, and its macros name the best-named of them.
func (r *routed) importServer(st serverState, base *registry.Catalog, taken map[string]string, imp importer) {
	names := distinctNames(st.tools)
	family, macros := GeneralFamilyPrefix+st.reg.Name, map[string][]string{}
	var inherit tool.Spec
	if rep, typed := replacements[st.reg.Type]; typed {
		family, macros = rep.family, familyMacros(st.reg.Type, names)
		b, ok := base.Lookup(rep.builtin)
		if !ok {
			// Fail closed: without the built-in there are no rules to
			// carry over, and a replacement must not go without them.
			r.drop(st.reg.Name+"/*", "it replaces the built-in "+rep.builtin+", which this deployment does not register")
			return
		}
		inherit = b.Spec()
	}
	seen := make(map[string]bool, len(names))
	for _, t := range st.tools {
		if seen[t.Name] {
			continue // a repeated name within one listing counts once
		}
		seen[t.Name] = true
		// As the allowlist names it, and only for messages: a server's
		// name may hold terminal control codes, which never reach a log
		// or a terminal.
		full := st.reg.Name + "/" + printable(capText(t.Name, MaxToolNameChars))
		imported, err := imp(st, mcpTool{t}, family, macros[t.Name], inherit)
		if err != nil {
			r.drop(full, err.Error())
			continue
		}
		// With wire names neither happens (server parts are distinct and
		// hold no "__"; no built-in name has one) unless a server lists a
		// plain name equal to another of its tools' hashed one, or hashes
		// collide: server data must never reach the catalog's
		// duplicate-name panic.
		if by, dup := taken[imported.Name()]; dup {
			r.drop(full, fmt.Sprintf("its name %s is already taken by %s", imported.Name(), by))
			continue
		}
		if _, builtin := base.Lookup(imported.Name()); builtin {
			r.drop(full, fmt.Sprintf("its name %s is a built-in tool's", imported.Name()))
			continue
		}
		taken[imported.Name()] = full
		r.overlay.Tools = append(r.overlay.Tools, imported)
	}
}

// drop leaves a tool out with a reason; the reason may quote the server
// (a schema it sent), so control codes are replaced.
func (r *routed) drop(name, reason string) {
	r.overlay.Dropped = append(r.overlay.Dropped, registry.Exclusion{Name: name, Reason: printable(reason)})
}

// familyConflicts finds typed families with more than one enabled server:
// those servers are skipped (the built-in stays) and the admin is told.
func familyConflicts(states []serverState, r *routed) map[string]bool {
	byType := map[string][]serverState{}
	for _, st := range states {
		if _, typed := replacements[st.reg.Type]; typed {
			byType[st.reg.Type] = append(byType[st.reg.Type], st)
		}
	}
	skip := map[string]bool{}
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, typ := range types {
		sts := byType[typ]
		if len(sts) < 2 {
			continue
		}
		var names []string
		for _, st := range sts {
			skip[st.reg.ID] = true
			names = append(names, st.reg.Name)
		}
		msg := fmt.Sprintf("%d enabled %s servers (%s): none is used; disable all but one", len(sts), typ, strings.Join(names, ", "))
		r.notices = append(r.notices, msg)
		for _, n := range names {
			r.drop(n+"/*", msg)
		}
	}
	return skip
}

// distinctNames returns the names of a tool list, each once, in order.
func distinctNames(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		if !slices.Contains(out, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

// familyMacros picks, for a typed server's tools, which tool each of the
// replaced built-in's prompt macros names: the best-named one.
func familyMacros(typ string, names []string) map[string][]string {
	out := map[string][]string{}
	add := func(macro, name string) {
		if name != "" {
			out[name] = append(out[name], macro)
		}
	}
	switch typ {
	case store.MCPWebSearch:
		web := bestName(names, []string{"web", "search"}, []string{"image", "video", "news", "local", "fetch", "metadata", "summar", "preview"})
		add("web_search_tool", web)
		for _, kind := range []string{"image", "video", "news"} {
			pick := bestName(names, []string{kind}, nil)
			if !strings.Contains(strings.ToLower(pick), kind) {
				pick = web
			}
			add(kind+"_search_tool", pick)
		}
	case store.MCPURLFetcher:
		fetch := bestName(names, []string{"fetch", "read", "crawl", "page", "open", "visit", "url"}, []string{"metadata", "meta", "head"})
		add("url_fetch_tool", fetch)
		meta := bestName(names, []string{"metadata", "head", "headers", "preview", "info"}, nil)
		if bestScore(meta, []string{"metadata", "head", "headers", "preview", "info"}, nil) <= 0 {
			meta = fetch
		}
		add("url_metadata_tool", meta)
	}
	return out
}

// bestName returns the name scoring highest (+10 per preferred pattern it
// contains, −10 per avoided one), ties broken alphabetically; when none
// scores above zero, the alphabetically first name. "" for no names.
func bestName(names, prefer, avoid []string) string {
	sorted := slices.Sorted(slices.Values(names))
	if len(sorted) == 0 {
		return ""
	}
	best, bestAt := "", 0
	for _, n := range sorted {
		if s := bestScore(n, prefer, avoid); s > bestAt {
			best, bestAt = n, s
		}
	}
	if best == "" {
		return sorted[0]
	}
	return best
}

func bestScore(name string, prefer, avoid []string) int {
	lower := strings.ToLower(name)
	score := 0
	for _, p := range prefer {
		if strings.Contains(lower, p) {
			score += 10
		}
	}
	for _, a := range avoid {
		if strings.Contains(lower, a) {
			score -= 10
		}
	}
	return score
}
