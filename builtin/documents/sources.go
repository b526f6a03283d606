// Package documents provides the tools that read what people give an
// agent: read_document (the text of a file attached to this
// conversation, or of a knowledge document, page by page) and
// search_attachments (hybrid search over this conversation's files).
package documents

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// Doc is a document a Source found.
type Doc struct {
	// ID and Name identify it; Kind is what it was read as ("pdf",
	// "docx", "text"), Origin the source's label ("attachment").
	ID, Name, Kind, Origin string
	// Unreadable, when not empty, is why its text could not be read, in
	// one line (an encrypted PDF, a binary file).
	Unreadable string
	// Text is its extracted text (empty when Unreadable).
	Text string
}

// Source finds documents a turn may read. Every lookup is scoped by the
// turn's Scope, never by arguments.
type Source interface {
	// Find returns the document named ref (its ID, or its name; the
	// newest of that name) in the scope, or an error wrapping
	// store.ErrNotFound.
	Find(ctx context.Context, s tool.Scope, ref string) (Doc, error)
	// Names lists the names of the documents in the scope, for a
	// not-found answer (at most a few dozen).
	Names(ctx context.Context, s tool.Scope) ([]string, error)
}

// Sources are looked up in order: the first that finds ref answers.
// Attachments come first, so a file attached to the conversation wins
// over a knowledge document of the same name.
type Sources []Source

// Find returns the first source's document named ref; store.ErrNotFound,
// wrapped, when no source has it.
func (ss Sources) Find(ctx context.Context, s tool.Scope, ref string) (Doc, error) {
	for _, src := range ss {
		d, err := src.Find(ctx, s, ref)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		return d, err
	}
	return Doc{}, fmt.Errorf("document %q: %w", ref, store.ErrNotFound)
}

// Names lists every source's document names, in source order.
func (ss Sources) Names(ctx context.Context, s tool.Scope) ([]string, error) {
	var out []string
	for _, src := range ss {
		n, err := src.Names(ctx, s)
		if err != nil {
			return nil, err
		}
		out = append(out, n...)
	}
	return out, nil
}

// AttachmentStore is what Attachments reads.
type AttachmentStore interface {
	GetAttachment(ctx context.Context, orgID, conversationID, id string) (store.Attachment, error)
	AttachmentText(ctx context.Context, orgID, conversationID, id string) (string, error)
	ListAttachments(ctx context.Context, orgID, conversationID string) ([]store.Attachment, error)
}

// Attachments is the Source of the files attached to the turn's
// conversation.
type Attachments struct{ Store AttachmentStore }

// Find implements Source: by ID, else by name (exact, then ignoring
// case; the newest file of that name).
func (a Attachments) Find(ctx context.Context, s tool.Scope, ref string) (Doc, error) {
	if a.Store == nil {
		return Doc{}, tool.Infra(fmt.Errorf("read attachments: %w", store.ErrNoStore))
	}
	if s.ConversationID == "" {
		return Doc{}, store.ErrNotFound
	}
	att, err := a.Store.GetAttachment(ctx, s.OrgID, s.ConversationID, ref)
	if errors.Is(err, store.ErrNotFound) {
		att, err = a.byName(ctx, s, ref)
	}
	if err != nil {
		return Doc{}, err
	}
	d := Doc{ID: att.ID, Name: att.Name, Kind: att.Kind, Origin: "attachment"}
	if att.Status != store.AttachmentReady {
		d.Unreadable = att.Error
		if d.Unreadable == "" {
			d.Unreadable = fmt.Sprintf("%q could not be read", att.Name)
		}
		return d, nil
	}
	d.Text, err = a.Store.AttachmentText(ctx, s.OrgID, s.ConversationID, att.ID)
	return d, err
}

func (a Attachments) byName(ctx context.Context, s tool.Scope, name string) (store.Attachment, error) {
	list, err := a.Store.ListAttachments(ctx, s.OrgID, s.ConversationID)
	if err != nil {
		return store.Attachment{}, err
	}
	for _, match := range []func(string) bool{
		func(n string) bool { return n == name },
		func(n string) bool { return strings.EqualFold(n, name) },
	} {
		for i := len(list) - 1; i >= 0; i-- {
			if match(list[i].Name) {
				return list[i], nil
			}
		}
	}
	return store.Attachment{}, store.ErrNotFound
}

// Names implements Source.
func (a Attachments) Names(ctx context.Context, s tool.Scope) ([]string, error) {
	if a.Store == nil || s.ConversationID == "" {
		return nil, nil
	}
	list, err := a.Store.ListAttachments(ctx, s.OrgID, s.ConversationID)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(list))
	for i, att := range list {
		out[i] = att.Name
	}
	return out, nil
}
