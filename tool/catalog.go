package tool

import "context"

// Catalog is what the tool-discovery tools (search_tools, list_tools,
// get_tool_schema) see of the running turn: the tools it may use,
// declared or not. The agent loop puts it in the context of every call
// it dispatches (WithCatalog); nothing else does, so a handler run
// outside a turn finds none.
type Catalog interface {
	// Available returns the tools the turn's selection allows, in
	// registration order: what a call may still declare mid-turn
	// (Effect.Declare), besides the ones declared already.
	Available() []*Tool
	// Declared reports whether the named tool is declared to the model
	// now.
	Declared(name string) bool
}

type catalogKey struct{}

// WithCatalog returns ctx carrying c.
func WithCatalog(ctx context.Context, c Catalog) context.Context {
	return context.WithValue(ctx, catalogKey{}, c)
}

// CatalogFrom returns the catalog ctx carries, false when it has none.
func CatalogFrom(ctx context.Context) (Catalog, bool) {
	c, ok := ctx.Value(catalogKey{}).(Catalog)
	return c, ok && c != nil
}
