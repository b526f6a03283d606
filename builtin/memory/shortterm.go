package memory

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// ShortTermFamily is update_short_term_memory's family, which the
// short_term_memory switch gates (set off, it takes the tool out).
const ShortTermFamily = "short_term_memory"

//go:embed update_short_term_memory.md
var shortTermDescription string

// ShortTermInput is update_short_term_memory's arguments.
type ShortTermInput struct {
	Text string `json:"text" jsonschema:"the whole notes, at most 4000 characters"`
}

// shortTermRequires: the memory switch on (or short_term_memory's own);
// no embedding model is needed.
func shortTermRequires(sel turn.Selection) string {
	if !turn.ShortTermMemoryOn(sel.Switches) {
		return "memory switch off"
	}
	return ""
}

func (s *svc) shortTermTool() *tool.Tool {
	return tool.New(tool.Spec{
		Name: "update_short_term_memory", Family: ShortTermFamily, Macros: []string{"short_term_memory_tool"},
		Description: strings.TrimSpace(shortTermDescription), Access: tool.Write, Requires: shortTermRequires,
		Limits: []tool.Limit{{Name: "text_chars", Value: store.MaxShortTermRunes}},
	}, s.updateShortTerm)
}

// updateShortTerm replaces the thread's working memory whole.
func (s *svc) updateShortTerm(ctx context.Context, sc tool.Scope, in ShortTermInput) (string, error) {
	text := strings.TrimSpace(in.Text)
	if n := utf8.RuneCountInString(text); n > store.MaxShortTermRunes {
		return "", fmt.Errorf("not saved: the notes are %d characters; the limit is %d, so write them shorter", n, store.MaxShortTermRunes)
	}
	thread := sc.Thread()
	if thread == "" {
		return "", errors.New("not saved: this turn has no conversation to keep notes for")
	}
	if s.ShortTerms == nil {
		return "", tool.Infra(fmt.Errorf("update_short_term_memory: %w", store.ErrNoStore))
	}
	m := store.ShortTerm{OrgID: sc.OrgID, Thread: thread, ConversationID: sc.ConversationID, Text: text, UpdatedAt: s.Now()}
	if err := s.ShortTerms.PutShortTerm(ctx, m); err != nil {
		return "", storeError("update_short_term_memory", err)
	}
	if text == "" {
		return "Short-term memory cleared.", nil
	}
	return fmt.Sprintf("Short-term memory saved (%d of %d characters); later turns here will show it.", utf8.RuneCountInString(text), store.MaxShortTermRunes), nil
}
