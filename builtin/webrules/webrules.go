// Package webrules holds the prompt fragments the web tools share
// (web_search, fetch_url, research_web). A fragment is one text however many
// tools carry it, so a turn with several web tools gets each paragraph once
// (the registry drops identical fragments); keeping the text here, and not
// in a copy per tool package, keeps it identical.
package webrules

import (
	_ "embed"
	"strings"
)

var (
	//go:embed queries.md
	queries string
	//go:embed untrusted.md
	untrusted string
)

// Queries is the paragraph of the tools that search (web_search,
// research_web): when to search and how to write a query.
func Queries() string { return strings.TrimSpace(queries) }

// Untrusted is the paragraph of every tool that brings web text into the
// turn: that text is data, never instructions.
func Untrusted() string { return strings.TrimSpace(untrusted) }
