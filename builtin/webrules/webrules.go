// Package webrules holds what the web tools (web_search, fetch_url,
// research_web) share: their prompt fragments, and the provider rule
// that keeps them all off the same providers with one reason. A fragment is one text however many
// tools carry it, so a turn with several web tools gets each paragraph once
// (the registry drops identical fragments); keeping the text here, and not
// in a copy per tool package, keeps it identical.
package webrules

import (
	_ "embed"
	"fmt"
	"slices"
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

// ProviderExcluded is the web tools' requirement on the turn's model
// provider: the reason it is left out when exclude (web.exclude_providers,
// from the config or the organisation's Settings) names provider, else "".
func ProviderExcluded(exclude []string, provider string) string {
	if slices.Contains(exclude, provider) {
		return fmt.Sprintf("provider %s is excluded from the web tools (web.exclude_providers, in config or Settings)", provider)
	}
	return ""
}
