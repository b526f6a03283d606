package app

// Ceilings on serialised tool definitions, in characters. A tool that pushes
// a total over its ceiling fails TestDefinitionCeilings: raise the ceiling in
// the same change, or write shorter.
const (
	// AlwaysPaidCeiling bounds the definitions every tool-using turn pays:
	// the six workspace tools and the five always-on helpers.
	AlwaysPaidCeiling = 13456
	// WidestCeiling bounds the widest toolset any turn can get.
	WidestCeiling = 40122
)

// Ceilings on the tools' prompt fragments, in characters of authored text,
// each distinct fragment once. Fragments are paid on every model call of a
// turn that declares their tools, like definitions; TestDefinitionCeilings
// holds them too.
const (
	// AlwaysPaidFragmentsCeiling bounds the fragments of the always-on
	// tools, which every tool-using turn's system prompt carries.
	AlwaysPaidFragmentsCeiling = 1000
	// WidestFragmentsCeiling bounds the fragments of every built-in tool.
	WidestFragmentsCeiling = 2400
)
