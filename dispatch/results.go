package dispatch

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// store keeps results over the threshold: the full body goes to the result
// store and the model reads a preview that names the reference. It runs under
// the turn's context, not the call's deadline, so a result computed just in
// time is not lost.
func (d *Dispatcher) store(ctx context.Context, s tool.Scope, name string, res tool.Result) (tool.Result, error) {
	n := utf8.RuneCountInString(res.Content)
	if n <= d.cfg.Threshold {
		return res, nil
	}
	ref := d.cfg.IDs.New("res_")
	rec := store.Result{
		Ref: ref, OrgID: s.OrgID, ConversationID: s.ConversationID, TurnID: s.TurnID, UserID: s.UserID,
		Tool: name, Body: res.Content, CreatedAt: d.cfg.Now().UTC(),
	}
	err := d.cfg.Results.PutResult(ctx, rec, d.cfg.Quota)
	switch {
	case errors.Is(err, store.ErrQuota):
		// Too large to keep at all: the model still reads the preview.
		d.cfg.Logger.Info("tool result over the stored results quota", "tool", name, "bytes", len(res.Content))
		res.Content = fmt.Sprintf("%s\n\n[Truncated: showing %d of %d characters. The full result is larger than the stored results quota allows, so it was not stored; ask for less at once.]",
			prefix(res.Content, d.cfg.Preview), d.cfg.Preview, n)
		return res, nil
	case err != nil:
		return tool.Result{}, fmt.Errorf("dispatch %s: store result: %w", name, err)
	}
	res.Ref = ref
	res.Content = fmt.Sprintf("%s\n\n[Truncated: showing %d of %d characters. The full result is stored as %s; read the rest with read_tool_result.]",
		prefix(res.Content, d.cfg.Preview), d.cfg.Preview, n, ref)
	return res, nil
}

// prefix returns the first n characters of s.
func prefix(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
