// Package documents provides the tools that read what people give an
// agent: read_document (the text of a file attached to this
// conversation, or of a knowledge document, page by page) and
// search_attachments (hybrid search over this conversation's files).
package documents

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/document"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// Doc is a document a Source found.
type Doc struct {
	// ID and Name identify it; Kind is what it was read as ("pdf",
	// "docx", "text"), Origin the source's label ("attachment",
	// "knowledge document").
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
	// not-found answer (which shows at most MaxNames of them).
	Names(ctx context.Context, s tool.Scope) ([]string, error)
	// Label says what the source holds, for that answer ("attached to
	// this conversation").
	Label() string
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

// MaxNames is how many names of each source a not-found answer shows.
const MaxNames = 10

// Listing is what a not-found answer says there is: for each source that
// has documents, its label and up to MaxNames of their names (the newest
// last), and how many more it has; "" when no source has any.
func (ss Sources) Listing(ctx context.Context, s tool.Scope) (string, error) {
	var parts []string
	for _, src := range ss {
		names, err := src.Names(ctx, s)
		if err != nil {
			return "", err
		}
		if len(names) == 0 {
			continue
		}
		more := ""
		if len(names) > MaxNames {
			more = fmt.Sprintf(" and %d more", len(names)-MaxNames)
			names = names[len(names)-MaxNames:]
		}
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		parts = append(parts, src.Label()+": "+strings.Join(quoted, ", ")+more)
	}
	return strings.Join(parts, "; "), nil
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
	return newestNamed(list, func(a store.Attachment) string { return a.Name }, name)
}

// Label implements Source.
func (Attachments) Label() string { return "attached to this conversation" }

// Names implements Source.
func (a Attachments) Names(ctx context.Context, s tool.Scope) ([]string, error) {
	if a.Store == nil || s.ConversationID == "" {
		return nil, nil
	}
	list, err := a.Store.ListAttachments(ctx, s.OrgID, s.ConversationID)
	if err != nil {
		return nil, err
	}
	return namesOf(list, func(a store.Attachment) string { return a.Name }), nil
}

// KnowledgeStore is what Knowledge reads (store.Knowledge).
type KnowledgeStore interface {
	GetKnowledgeDocument(ctx context.Context, orgID, agent, id string) (store.KnowledgeDocument, error)
	ListKnowledgeDocuments(ctx context.Context, orgID, agent string) ([]store.KnowledgeDocument, error)
	DocumentKnowledgeChunks(ctx context.Context, orgID, agent, id string, from, limit int) ([]store.KnowledgeHit, error)
}

// Knowledge is the Source of the documents attached to the turn's agent
// (its organisation and agent from the scope alone). A document's text
// is its chunks joined in order (document.JoinChunks); one still
// indexing or failed is Unreadable, saying so.
type Knowledge struct{ Store KnowledgeStore }

// Find implements Source: by ID, else by name (exact, then ignoring
// case; the newest document of that name).
func (k Knowledge) Find(ctx context.Context, s tool.Scope, ref string) (Doc, error) {
	if k.Store == nil {
		return Doc{}, tool.Infra(fmt.Errorf("read knowledge: %w", store.ErrNoStore))
	}
	if s.Agent == "" {
		return Doc{}, store.ErrNotFound
	}
	kd, err := k.Store.GetKnowledgeDocument(ctx, s.OrgID, s.Agent, ref)
	if errors.Is(err, store.ErrNotFound) {
		kd, err = k.byName(ctx, s, ref)
	}
	if err != nil {
		return Doc{}, err
	}
	d := Doc{ID: kd.ID, Name: kd.Name, Kind: kindOf(kd.Name, kd.MediaType), Origin: "knowledge document"}
	switch kd.Status {
	case store.KnowledgeReady:
		d.Text, err = k.text(ctx, s, kd)
		return d, err
	case store.KnowledgeIndexing:
		d.Unreadable = fmt.Sprintf("knowledge document %q is still being indexed (%d of %d chunks); try again later", kd.Name, kd.Chunks, kd.Total)
	default:
		d.Unreadable = fmt.Sprintf("knowledge document %q could not be indexed: %s", kd.Name, cmp.Or(kd.Reason, "no reason recorded"))
	}
	return d, nil
}

// text joins the ready document's chunks, a store batch at a time.
func (k Knowledge) text(ctx context.Context, s tool.Scope, kd store.KnowledgeDocument) (string, error) {
	var chunks []string
	for len(chunks) < store.MaxKnowledgeChunks {
		hs, err := k.Store.DocumentKnowledgeChunks(ctx, s.OrgID, s.Agent, kd.ID, len(chunks), store.MaxKnowledgeBatch)
		if err != nil {
			return "", err
		}
		for _, h := range hs {
			chunks = append(chunks, h.Text)
		}
		if len(hs) < store.MaxKnowledgeBatch {
			break
		}
	}
	return document.JoinChunks(chunks), nil
}

func (k Knowledge) byName(ctx context.Context, s tool.Scope, name string) (store.KnowledgeDocument, error) {
	list, err := k.Store.ListKnowledgeDocuments(ctx, s.OrgID, s.Agent)
	if err != nil {
		return store.KnowledgeDocument{}, err
	}
	return newestNamed(list, func(d store.KnowledgeDocument) string { return d.Name }, name)
}

// Label implements Source.
func (Knowledge) Label() string { return "in this agent's knowledge" }

// Names implements Source.
func (k Knowledge) Names(ctx context.Context, s tool.Scope) ([]string, error) {
	if k.Store == nil || s.Agent == "" {
		return nil, nil
	}
	list, err := k.Store.ListKnowledgeDocuments(ctx, s.OrgID, s.Agent)
	if err != nil {
		return nil, err
	}
	return namesOf(list, func(d store.KnowledgeDocument) string { return d.Name }), nil
}

// kindOf is what a knowledge document was read as, from its name and
// type as document.Extract tells them apart.
func kindOf(name, mediaType string) string {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".pdf") || mediaType == "application/pdf":
		return "pdf"
	case strings.HasSuffix(n, ".docx") || strings.Contains(mediaType, "wordprocessingml"):
		return "docx"
	}
	return "text"
}

// newestNamed is the last of list (oldest first) named want exactly, else
// the last named want ignoring case, else store.ErrNotFound.
func newestNamed[T any](list []T, name func(T) string, want string) (T, error) {
	for _, match := range []func(string) bool{
		func(n string) bool { return n == want },
		func(n string) bool { return strings.EqualFold(n, want) },
	} {
		for i := len(list) - 1; i >= 0; i-- {
			if match(name(list[i])) {
				return list[i], nil
			}
		}
	}
	var zero T
	return zero, store.ErrNotFound
}

// namesOf is the name of each of list, in order.
func namesOf[T any](list []T, name func(T) string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = name(v)
	}
	return out
}
