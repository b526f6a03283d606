// Package intent is Deliberate Tool Mode: it declares tools only when the
// message asks for them.
//
// With the mode on, a turn's selected toolset is narrowed to the families
// (targets) that the message, the recent conversation or a custom trigger
// opens: "remind me at 5" opens reminder, "draw a picture of a fox" opens
// image, "I forgot my password" opens nothing. The always-on helpers
// (clarifying question, suggestions, calculator, read_tool_result,
// read_transcript) widen no permission and stay declared, first, unless
// the community opts in to gating them too; with nothing opened only they
// are declared. The mode only hides declarations: it never adds a tool
// that selection left out, and a call to a hidden tool gets the ordinary
// refusal.
//
// Triggers come from keyword packs (one YAML file per language, all checked
// on every message whatever the language setting), from the English rules
// in the "en" pack, and from each community's custom triggers. Matching is
// one Aho–Corasick pass over the normalised text (case-folded, NFKC,
// whitespace collapsed); a trigger in a spaced script must match on word
// boundaries, one in an unspaced script (Han, kana, Hangul, Thai) may match
// inside a longer word, and a trigger ending in '*' matches any word it
// starts.
package intent
