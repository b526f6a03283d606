// Package history provides search_conversations: a search of what the
// person wrote in their earlier conversations (store.History), declared
// only when the agent's conversation_search switch is on.
//
// Whose conversations, in which organisation, and which conversation is
// left out (the turn's own) come from the turn's scope alone; only the
// person's own messages are searched, never the model's replies, tool
// calls, tool results or context messages.
package history

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Family is search_conversations' family; Switch the switch that must be
// on for it (unset or off, it is left out).
const (
	Family = "history"
	Switch = "conversation_search"
)

// Limits of one call.
const (
	// DefaultLimit is how many conversations a search returns unless
	// asked; MaxLimit the most it may ask for (a larger limit is refused,
	// as search_knowledge refuses one, not clamped).
	DefaultLimit = 5
	MaxLimit     = 10
	// MaxQueryRunes bounds the query (a longer one is refused).
	MaxQueryRunes = 200
	// SnippetRunes bounds the passage of the person's message shown per
	// hit, ellipses included; TitleRunes the title shown.
	SnippetRunes = 300
	TitleRunes   = 100
	// MaxOutputRunes bounds the whole answer: MaxLimit hits of a title,
	// a date and a snippet, with their framing.
	MaxOutputRunes = 6000
)

//go:embed search_conversations.md
var description string

// Input is the tool's arguments.
type Input struct {
	Query string `json:"query" jsonschema:"words the person wrote, at most 200 characters; every word must be in one message"`
	Limit int    `json:"limit,omitempty" jsonschema:"conversations to return, 1–10 (default 5)"`
}

// Tool returns search_conversations over h. A nil h keeps the
// declaration; its calls fail with an infrastructure error wrapping
// store.ErrNoStore. The bounds of the query and the limit are in the
// argument descriptions and checked by the handler, not the schema, so
// that a call past one gets one line naming the bound (a schema refusal
// would echo the whole query back).
func Tool(h store.History) *tool.Tool {
	return tool.New(tool.Spec{
		Name:        "search_conversations",
		Family:      Family,
		Description: strings.TrimSpace(description),
		Access:      tool.Read,
		Switches:    []string{Switch},
		Requires:    Requires,
		Limits: []tool.Limit{
			{Name: "limit_default", Value: DefaultLimit}, {Name: "limit_max", Value: MaxLimit},
			{Name: "query_chars", Value: MaxQueryRunes}, {Name: "query_words", Value: store.MaxHistoryWords},
			{Name: "snippet_chars", Value: SnippetRunes},
		},
	}, func(ctx context.Context, sc tool.Scope, in Input) (string, error) {
		return search(ctx, h, sc, in)
	})
}

// Requires is search_conversations' condition: the conversation_search
// switch on. It is off by default, since the tool reads other
// conversations than the one at hand.
func Requires(s turn.Selection) string {
	if !s.Switch(Switch) {
		return Switch + " switch off"
	}
	return ""
}

// query checks the arguments and returns the words to match and the
// limit, or the one error the model is told.
func query(in Input) ([]string, int, error) {
	q := strings.TrimSpace(in.Query)
	if n := utf8.RuneCountInString(q); n > MaxQueryRunes {
		return nil, 0, fmt.Errorf("query is %d characters; the limit is %d: give a few distinctive words", n, MaxQueryRunes)
	}
	words := store.HistoryWords(q)
	switch {
	case len(words) == 0:
		return nil, 0, errors.New("query is empty: give a few words the person wrote")
	case len(words) > store.MaxHistoryWords:
		return nil, 0, fmt.Errorf("query has %d words; the limit is %d: keep the most distinctive ones", len(words), store.MaxHistoryWords)
	case in.Limit < 0 || in.Limit > MaxLimit:
		return nil, 0, fmt.Errorf("limit must be between 1 and %d, got %d", MaxLimit, in.Limit)
	}
	if in.Limit == 0 {
		return words, DefaultLimit, nil
	}
	return words, in.Limit, nil
}

func search(ctx context.Context, h store.History, sc tool.Scope, in Input) (string, error) {
	words, limit, err := query(in)
	if err != nil {
		return "", err
	}
	if sc.OrgID == "" || sc.UserID == "" {
		return "", errors.New("this turn has no signed-in person, so there are no earlier conversations to search")
	}
	if h == nil {
		return "", tool.Infra(fmt.Errorf("search_conversations: %w", store.ErrNoStore))
	}
	hits, err := h.SearchHistory(ctx, store.HistoryQuery{OrgID: sc.OrgID, UserID: sc.UserID, Exclude: sc.ConversationID, Words: words, Limit: limit})
	if err != nil {
		return "", tool.Infra(fmt.Errorf("search_conversations: %w", err))
	}
	if len(hits) == 0 {
		return "No earlier conversation has a message of the person's with all of these words.", nil
	}
	return render(hits, words), nil
}

// render lists the hits for the model, in the store's order: a line
// per conversation (title and the message's date in UTC; ids are data,
// never shown to the model) and the
// passage of the person's message around the match.
func render(hits []store.HistoryHit, words []string) string {
	var b strings.Builder
	if len(hits) == 1 {
		b.WriteString("1 earlier conversation (the person's own words):")
	} else {
		fmt.Fprintf(&b, "%d earlier conversations, most recently active first (the person's own words):", len(hits))
	}
	for i, h := range hits {
		title := "(untitled)"
		if t := clip(h.Title, TitleRunes); t != "" {
			title = strconv.Quote(t)
		}
		fmt.Fprintf(&b, "\n[%d] %s (%s)\n    %s", i+1, title,
			h.CreatedAt.UTC().Format("2006-01-02"), Snippet(h.Content, words, SnippetRunes))
	}
	return b.String()
}

// clip is s on one line, cut to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(store.PlainText(s)), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}
