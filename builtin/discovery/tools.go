package discovery

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Names of the tool-discovery tools, declared when the engine defers an
// agent's tools (engine.Deferral): search_tools finds tools by what they
// do, list_tools lists them, get_tool_schema shows one whole. The tools
// search_tools finds and the one get_tool_schema shows are declared from
// the model's next step on (tool.Effect.Declare).
const (
	SearchName = "search_tools"
	ListName   = "list_tools"
	SchemaName = "get_tool_schema"
)

// Names lists the discovery tools in the order they are declared.
var Names = []string{SearchName, ListName, SchemaName}

// Bounds of the discovery tools' calls.
const (
	MaxQueries    = 5   // queries in one search_tools call
	MaxQueryChars = 200 // characters of one query
	PerQuery      = 5   // tools one query finds
	MaxLoaded     = 10  // tools one search_tools call declares
	ListPage      = 50  // tools one list_tools call shows
	// MaxSchemaChars bounds the schema get_tool_schema shows; a larger
	// one is left to the tool's declaration.
	MaxSchemaChars = 8_000
	maxLineChars   = 160 // characters of a tool's line in a list
	maxNameChars   = 128 // characters of a name or family argument
)

// errNoCatalog answers a call made outside a turn's loop.
var errNoCatalog = errors.New("no tool catalog is available on this call")

var (
	//go:embed search_tools.md
	searchDescription string
	//go:embed list_tools.md
	listDescription string
	//go:embed get_tool_schema.md
	schemaDescription string
	//go:embed discovery_rules.md
	rules string
)

// Tools returns search_tools, list_tools and get_tool_schema. Each is
// always on (no allowlist names them) and requires what no selection
// gives, so select never declares them: the engine adds them, with the core tools, when it
// defers a large toolset (engine.Deferral). They read the turn's tools
// from the call's context (tool.CatalogFrom, set by the agent loop);
// outside a loop a call says there are none. search_tools keeps the
// indexes it builds, one per distinct set of available tools, at most
// maxIndexes.
func Tools() []*tool.Tool {
	ix := newIndexes(maxIndexes)
	return []*tool.Tool{
		tool.New(spec(SearchName, searchDescription, tuneSearch, tool.Limit{Name: "queries", Value: MaxQueries},
			tool.Limit{Name: "tools_per_query", Value: PerQuery}, tool.Limit{Name: "declared_per_call", Value: MaxLoaded}), func(ctx context.Context, _ tool.Scope, in SearchInput) (Loaded, error) {
			return search(ctx, ix, in)
		}),
		tool.New(spec(ListName, listDescription, tuneList, tool.Limit{Name: "tools_per_page", Value: ListPage}), func(ctx context.Context, _ tool.Scope, in ListInput) (string, error) {
			return list(ctx, in)
		}),
		tool.New(spec(SchemaName, schemaDescription, tuneSchema, tool.Limit{Name: "schema_chars", Value: MaxSchemaChars}), func(ctx context.Context, _ tool.Scope, in SchemaInput) (Loaded, error) {
			return schema(ctx, in)
		}),
	}
}

// requires keeps the discovery tools out of every selection.
func requires(turn.Selection) string {
	return "declared only when the agent's tools are deferred (tool discovery)"
}

func spec(name, desc string, tune func(*jsonschema.Schema), limits ...tool.Limit) tool.Spec {
	return tool.Spec{
		Name:        name,
		Family:      "tool_discovery",
		Description: strings.TrimSpace(desc),
		AlwaysOn:    true,
		Requires:    requires,
		Fragments:   []string{strings.TrimSpace(rules)},
		Tune:        tune,
		Limits:      limits,
	}
}

// SearchInput is search_tools' arguments.
type SearchInput struct {
	Queries []string `json:"queries" jsonschema:"what you need done, one short phrase per query"`
}

func tuneSearch(s *jsonschema.Schema) {
	n, one, chars := MaxQueries, 1, MaxQueryChars
	q := s.Properties["queries"]
	q.MaxItems, q.MinItems = &n, &one
	q.Items.MaxLength = &chars
}

// ListInput is list_tools' arguments.
type ListInput struct {
	Family string `json:"family,omitempty" jsonschema:"only the tools of this family"`
	Offset int    `json:"offset,omitempty" jsonschema:"skip this many tools (the next page)"`
}

func tuneList(s *jsonschema.Schema) {
	n, zero := maxNameChars, 0.0
	s.Properties["family"].MaxLength = &n
	s.Properties["offset"].Minimum = &zero
}

// SchemaInput is get_tool_schema's arguments.
type SchemaInput struct {
	Name string `json:"name" jsonschema:"the tool's name"`
}

func tuneSchema(s *jsonschema.Schema) {
	n := maxNameChars
	s.Properties["name"].MaxLength = &n
}

// Loaded is a discovery call's answer: text for the model and the tools
// the loop is asked to declare; the loop adds which it declared.
type Loaded struct {
	text    string
	declare []string
}

// ModelText is what the model reads.
func (l Loaded) ModelText() string { return l.text }

// ToolEffect asks the loop to declare the tools found.
func (l Loaded) ToolEffect() tool.Effect { return tool.Effect{Declare: l.declare} }

// available is the turn's tools a discovery call may show, without the
// discovery tools themselves.
func available(ctx context.Context) (tool.Catalog, []*tool.Tool, error) {
	cat, ok := tool.CatalogFrom(ctx)
	if !ok {
		return nil, nil, errNoCatalog
	}
	all := cat.Available()
	out := make([]*tool.Tool, 0, len(all))
	for _, t := range all {
		if !slices.Contains(Names, t.Name()) {
			out = append(out, t)
		}
	}
	return cat, out, nil
}

// search answers search_tools: each query's best tools, and declares up
// to MaxLoaded of those not declared yet, each query's best first.
func search(ctx context.Context, ix *indexes, in SearchInput) (Loaded, error) {
	if len(in.Queries) == 0 || len(in.Queries) > MaxQueries {
		return Loaded{}, fmt.Errorf("give 1 to %d queries", MaxQueries)
	}
	for _, q := range in.Queries {
		if strings.TrimSpace(q) == "" || utf8.RuneCountInString(q) > MaxQueryChars {
			return Loaded{}, fmt.Errorf("each query must be 1 to %d characters", MaxQueryChars)
		}
	}
	cat, tools, err := available(ctx)
	if err != nil {
		return Loaded{}, err
	}
	idx, release, err := ix.get(ctx, tools)
	if err != nil {
		return Loaded{}, tool.Infra(err)
	}
	defer release()
	byName := make(map[string]*tool.Tool, len(tools))
	for _, t := range tools {
		byName[t.Name()] = t
	}
	found := make([][]string, len(in.Queries))
	var b strings.Builder
	for i, q := range in.Queries {
		if found[i], err = idx.Search(ctx, q, PerQuery); err != nil {
			return Loaded{}, tool.Infra(err)
		}
		fmt.Fprintf(&b, "%q:\n", strings.TrimSpace(q))
		if len(found[i]) == 0 {
			b.WriteString("- no tool matches\n")
		}
		for _, name := range found[i] {
			b.WriteString("- " + line(byName[name]))
			if cat.Declared(name) {
				b.WriteString(" (declared)")
			}
			b.WriteByte('\n')
		}
	}
	return Loaded{text: strings.TrimRight(b.String(), "\n"), declare: toLoad(cat, found)}, nil
}

// toLoad picks the tools to declare from each query's ranking: the
// first of every query, then the second, …, skipping those declared or
// picked already, at most MaxLoaded.
func toLoad(cat tool.Catalog, found [][]string) []string {
	var out []string
	for rank := range PerQuery {
		for _, names := range found {
			if rank >= len(names) || len(out) == MaxLoaded {
				continue
			}
			if n := names[rank]; !cat.Declared(n) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// line is a tool's entry in a list: its name, then its description's
// first line, cut at maxLineChars.
func line(t *tool.Tool) string {
	desc, _, _ := strings.Cut(strings.TrimSpace(t.Spec().Description), "\n")
	if utf8.RuneCountInString(desc) > maxLineChars {
		r := []rune(desc)
		desc = strings.TrimSpace(string(r[:maxLineChars-1])) + "…"
	}
	return t.Name() + ": " + desc
}

// list answers list_tools: a page of the available tools, in
// registration order, optionally of one family, with a count per family
// on the first page.
func list(ctx context.Context, in ListInput) (string, error) {
	if in.Offset < 0 {
		return "", errors.New("offset must not be negative")
	}
	cat, tools, err := available(ctx)
	if err != nil {
		return "", err
	}
	if in.Family != "" {
		tools = slices.DeleteFunc(tools, func(t *tool.Tool) bool { return t.Family() != in.Family })
		if len(tools) == 0 {
			return "", fmt.Errorf("no available tool is in family %q", in.Family)
		}
	}
	var b strings.Builder
	if in.Offset == 0 && in.Family == "" {
		b.WriteString("Families: " + familyCounts(tools) + "\n")
	}
	if in.Offset >= len(tools) {
		fmt.Fprintf(&b, "No tools past %d (there are %d).", in.Offset, len(tools))
		return b.String(), nil
	}
	page := tools[in.Offset:min(len(tools), in.Offset+ListPage)]
	for _, t := range page {
		b.WriteString("- " + line(t))
		if cat.Declared(t.Name()) {
			b.WriteString(" (declared)")
		}
		b.WriteByte('\n')
	}
	if next := in.Offset + len(page); next < len(tools) {
		fmt.Fprintf(&b, "%d more: call %s with offset %d.", len(tools)-next, ListName, next)
	} else {
		fmt.Fprintf(&b, "Declare one with %s or %s before calling it.", SchemaName, SearchName)
	}
	return b.String(), nil
}

// familyCounts is "web (3), memory (4), …" in order of first appearance.
func familyCounts(tools []*tool.Tool) string {
	var order []string
	count := map[string]int{}
	for _, t := range tools {
		f := t.Family()
		if count[f] == 0 {
			order = append(order, f)
		}
		count[f]++
	}
	parts := make([]string, len(order))
	for i, f := range order {
		parts[i] = fmt.Sprintf("%s (%d)", f, count[f])
	}
	return strings.Join(parts, ", ")
}

// schema answers get_tool_schema: the named tool's description and
// input schema, and declares it. A name the turn may not use is refused
// naming only that name.
func schema(ctx context.Context, in SchemaInput) (Loaded, error) {
	cat, tools, err := available(ctx)
	if err != nil {
		return Loaded{}, err
	}
	i := slices.IndexFunc(tools, func(t *tool.Tool) bool { return t.Name() == in.Name })
	if i < 0 {
		return Loaded{}, fmt.Errorf("no tool named %q is available", in.Name)
	}
	t := tools[i]
	d := t.Declaration()
	params, err := json.Marshal(d.Parameters)
	if err != nil {
		return Loaded{}, tool.Infra(fmt.Errorf("discovery: encode %s's schema: %w", t.Name(), err))
	}
	text := t.Name() + ": " + d.Description + "\nParameters: " + string(params)
	if utf8.RuneCountInString(text) > MaxSchemaChars {
		text = line(t) + fmt.Sprintf("\nIts schema is %d characters: read it in the tool's declaration.", len(params))
	}
	out := Loaded{text: text}
	if !cat.Declared(t.Name()) {
		out.declare = []string{t.Name()}
	}
	return out, nil
}
