package artifacts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// createIn is create_artifact's arguments.
type createIn struct {
	Title    string `json:"title" jsonschema:"a short title the user sees"`
	Kind     string `json:"kind" jsonschema:"what the content is"`
	Language string `json:"language,omitempty" jsonschema:"for kind code: the language (python, typescript, go, …)"`
	Content  string `json:"content" jsonschema:"the whole document"`
}

func (t *tools) create(ctx context.Context, s tool.Scope, in createIn) (string, error) {
	r, err := t.repo()
	if err != nil {
		return "", err
	}
	lang := strings.ToLower(strings.TrimSpace(in.Language))
	if in.Kind != store.ArtifactCode {
		lang = ""
	}
	n := store.NewArtifact{Artifact: store.Artifact{OrgID: s.OrgID, ID: t.cfg.IDs.New("art_"), OwnerID: s.UserID,
		ConversationID: s.ConversationID, Title: in.Title, Kind: in.Kind, Language: lang, Content: in.Content,
		CreatedAt: t.cfg.Now()}, AsDraft: store.Visual(in.Kind) && t.cfg.checks(), TurnID: s.TurnID}
	a, err := r.CreateArtifact(ctx, n, t.cfg.Quota)
	if err != nil {
		return "", storeErr("create_artifact", err)
	}
	return t.state("Created", a), nil
}

// rewriteIn is rewrite_artifact's arguments.
type rewriteIn struct {
	ID      string `json:"id" jsonschema:"the artifact's ID (art_…)"`
	Content string `json:"content" jsonschema:"the new whole document"`
	Title   string `json:"title,omitempty" jsonschema:"a new title; omit to keep it"`
}

func (t *tools) rewrite(ctx context.Context, s tool.Scope, in rewriteIn) (string, error) {
	a, err := t.get(ctx, s, in.ID)
	if err != nil {
		return "", err
	}
	return t.change(ctx, s, a, store.ArtifactRewrite, in.Title, in.Content, "")
}

// edit is one replacement of update_artifact.
type edit struct {
	OldString  string `json:"old_string" jsonschema:"exact text to replace, as it is in the current content"`
	NewString  string `json:"new_string" jsonschema:"text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence"`
}

// updateIn is update_artifact's arguments.
type updateIn struct {
	ID    string `json:"id" jsonschema:"the artifact's ID (art_…)"`
	Edits []edit `json:"edits" jsonschema:"the replacements, applied in order"`
	Title string `json:"title,omitempty" jsonschema:"a new title; omit to keep it"`
}

func (t *tools) update(ctx context.Context, s tool.Scope, in updateIn) (string, error) {
	if len(in.Edits) == 0 || len(in.Edits) > MaxEdits {
		return "", fmt.Errorf("update_artifact: give 1 to %d edits, not %d", MaxEdits, len(in.Edits))
	}
	a, err := t.get(ctx, s, in.ID)
	if err != nil {
		return "", err
	}
	text, err := applyEdits(current(a), in.Edits)
	if err != nil {
		return "", fmt.Errorf("update_artifact %s: %w; nothing was changed", a.ID, err)
	}
	patch, err := json.Marshal(in.Edits)
	if err != nil {
		return "", tool.Infra(err)
	}
	if len(patch) > store.MaxArtifactPatchBytes {
		// The content is what counts; an oversized patch is not kept.
		patch = nil
	}
	return t.change(ctx, s, a, store.ArtifactUpdate, in.Title, text, string(patch))
}

// applyEdits applies edits to text in order, all or none.
func applyEdits(text string, edits []edit) (string, error) {
	for i, e := range edits {
		if e.OldString == "" {
			return "", fmt.Errorf("edit %d: old_string is empty", i+1)
		}
		n := strings.Count(text, e.OldString)
		switch {
		case n == 0:
			return "", fmt.Errorf("edit %d: old_string was not found; it must match the current content exactly, whitespace included", i+1)
		case n > 1 && !e.ReplaceAll:
			return "", fmt.Errorf("edit %d: old_string occurs %d times; include more surrounding text to make it unique, or set replace_all", i+1, n)
		case e.ReplaceAll:
			text = strings.ReplaceAll(text, e.OldString, e.NewString)
		default:
			text = strings.Replace(text, e.OldString, e.NewString, 1)
		}
		if len(text) > store.MaxArtifactBytes {
			return "", fmt.Errorf("edit %d takes the content past %d bytes, the most an artifact holds", i+1, store.MaxArtifactBytes)
		}
	}
	return text, nil
}

// change writes a rewrite or update of a: a draft for a visual artifact
// a browser checks, else a new version.
func (t *tools) change(ctx context.Context, s tool.Scope, a store.Artifact, change, title, content, patch string) (string, error) {
	r, err := t.repo()
	if err != nil {
		return "", err
	}
	op := change + "_artifact"
	if content == current(a) && title == "" {
		return "", fmt.Errorf("%s %s: the content is unchanged; nothing was written", op, a.ID)
	}
	c := store.ArtifactChange{OrgID: s.OrgID, ConversationID: s.ConversationID, ID: a.ID, Title: title, Change: change,
		Patch: patch, Content: content, AsDraft: store.Visual(a.Kind) && t.cfg.checks(), Base: a.Base(),
		TurnID: s.TurnID, At: t.cfg.Now()}
	next, err := r.ChangeArtifact(ctx, c, t.cfg.Quota)
	if err != nil {
		return "", storeErr(op, err)
	}
	verb := map[string]string{store.ArtifactRewrite: "Rewrote", store.ArtifactUpdate: "Updated"}[change]
	return t.state(verb, next), nil
}

// idIn is the arguments of a tool naming one artifact.
type idIn struct {
	ID string `json:"id" jsonschema:"the artifact's ID (art_…)"`
}

func (t *tools) save(ctx context.Context, s tool.Scope, in idIn) (string, error) {
	r, err := t.repo()
	if err != nil {
		return "", err
	}
	if _, err := t.get(ctx, s, in.ID); err != nil {
		return "", err
	}
	a, err := r.SaveArtifactDraft(ctx, s.OrgID, s.ConversationID, in.ID, s.TurnID, t.cfg.Now())
	switch {
	case errors.Is(err, store.ErrArtifactNotInspected):
		return "", fmt.Errorf("save_artifact %s: the draft changed since it was last inspected (or was never inspected); call inspect_artifact first, nothing was saved", in.ID)
	case errors.Is(err, store.ErrArtifactNoDraft):
		return "", fmt.Errorf("save_artifact %s: there is no draft to save; the newest version is already the user's", in.ID)
	case err != nil:
		return "", storeErr("save_artifact", err)
	}
	return t.state("Saved", a), nil
}
