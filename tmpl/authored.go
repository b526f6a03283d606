// Package tmpl is the prompt template language: tool macros and conditional
// blocks, evaluated only on text authored by admins or shipped with Quiver.
package tmpl

// Authored is prompt text written by an admin or shipped with Quiver. Only
// authored text is ever rendered as a template; chat messages, model output
// and tool results are plain strings and never become Authored.
//
// The underlying string is unexported so that a conversion from an arbitrary
// string is visible at the call site ([Author]), which only configuration
// loading and admin APIs perform.
type Authored struct{ text string }

// Author marks text as authored. Call it only on text that an admin wrote
// (configuration files, admin APIs) or that ships with Quiver.
func Author(text string) Authored { return Authored{text: text} }

// Text returns the authored source text, unrendered.
func (a Authored) Text() string { return a.text }

// IsZero reports whether nothing was authored.
func (a Authored) IsZero() bool { return a.text == "" }
