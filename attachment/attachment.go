// Package attachment turns a file a person attaches to a conversation
// into a stored, searchable attachment: its text extracted
// (document.Extract), cut into chunks (document.Chunks), embedded by the
// organisation's embedding model when it has one, and stored with the
// file in one write (store.Attachments). The HTTP API, the CLI and the
// web UI all attach through it, so they accept and refuse the same files.
package attachment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/quiverhq/quiver/document"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// ErrRefused wraps the errors of files Add refuses before storing
// anything: binary files (document.ErrBinary), files over the size limit
// (document.ErrTooLarge, store.ErrAttachmentTooLarge), a conversation
// past its quota (store.ErrAttachmentQuota) and invalid names or types
// (store.ErrAttachmentInvalid). Each error's message is one line meant
// for the person who attached the file.
var ErrRefused = errors.New("attachment refused")

// Config is what an Adder needs. Store is required.
type Config struct {
	Store store.Attachments
	// Embed gives an organisation's embedding model; nil, or a source
	// answering none, stores chunks for full-text search only.
	Embed embed.Source
	// Extract reads the files; its zero value refuses PDFs.
	Extract document.Extractor
	// Quota caps each conversation's files; the zero value means the
	// store's bounds.
	Quota store.AttachmentQuota
	// Now is the clock; nil means clock.Now.
	Now func() time.Time
	// IDs makes attachment IDs ("att_…"); nil means random ones.
	IDs ids.Source
	// Logger receives embedding failures; nil means slog.Default().
	Logger *slog.Logger
}

// Adder attaches files. Safe for concurrent use.
type Adder struct{ cfg Config }

// New returns an Adder over cfg.
func New(cfg Config) *Adder {
	cfg.IDs = ids.OrRandom(cfg.IDs)
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Adder{cfg: cfg}
}

// File is one file to attach.
type File struct {
	Name      string
	MediaType string
	Data      []byte
}

// Add stores f as an attachment of the user's conversation in the
// organisation (the caller checked the conversation is the user's) and
// returns it. A file whose text cannot be extracted but that is a
// document (an encrypted or damaged PDF) is stored as unreadable, with
// the reason; a binary file, one over the size limit, one past the
// conversation's quota or with an invalid name is refused with an error
// wrapping ErrRefused and the cause, and nothing is stored. A failing
// embedding model leaves the chunks to full-text search, with a warning
// logged.
func (a *Adder) Add(ctx context.Context, orgID, userID, conversationID string, f File) (store.Attachment, error) {
	q := a.cfg.Quota.Limits()
	if int64(len(f.Data)) > q.MaxFileBytes {
		return store.Attachment{}, fmt.Errorf("%w: %q is %d bytes; the limit for one file is %d MiB: %w",
			ErrRefused, f.Name, len(f.Data), q.MaxFileBytes>>20, store.ErrAttachmentTooLarge)
	}
	if u, err := a.cfg.Store.AttachmentUsage(ctx, orgID, conversationID); err != nil {
		return store.Attachment{}, fmt.Errorf("attach: %w", err)
	} else if err := store.CheckAttachmentQuota(u, f.Name, int64(len(f.Data)), q); err != nil {
		return store.Attachment{}, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if f.MediaType == "" {
		f.MediaType = "application/octet-stream"
	}
	na := store.NewAttachment{
		Attachment: store.Attachment{OrgID: orgID, ID: a.cfg.IDs.New("att_"), OwnerID: userID, ConversationID: conversationID,
			Name: f.Name, MediaType: f.MediaType, CreatedAt: a.cfg.Now()},
		Data: f.Data,
	}
	doc, err := a.cfg.Extract.Extract(ctx, f.Name, f.MediaType, f.Data)
	switch {
	case errors.Is(err, document.ErrBinary), errors.Is(err, document.ErrTooLarge):
		return store.Attachment{}, fmt.Errorf("%w: %w", ErrRefused, err)
	case errors.Is(err, document.ErrEncrypted), errors.Is(err, document.ErrUnreadable):
		na.Status, na.Error = store.AttachmentUnreadable, oneLine(err.Error())
	case err != nil:
		return store.Attachment{}, fmt.Errorf("attach: %w", err)
	default:
		na.Status, na.Kind, na.Text = store.AttachmentReady, string(doc.Kind), store.PlainText(doc.Text)
		if err := a.index(ctx, orgID, &na); err != nil {
			return store.Attachment{}, fmt.Errorf("attach: %w", err)
		}
	}
	out, err := a.cfg.Store.PutAttachment(ctx, na, a.cfg.Quota)
	switch {
	case errors.Is(err, store.ErrAttachmentQuota), errors.Is(err, store.ErrAttachmentTooLarge), errors.Is(err, store.ErrAttachmentInvalid):
		return store.Attachment{}, fmt.Errorf("%w: %w", ErrRefused, err)
	case err != nil:
		return store.Attachment{}, fmt.Errorf("attach: %w", err)
	}
	return out, nil
}

// index cuts na's text into chunks and embeds them when the
// organisation has a model.
func (a *Adder) index(ctx context.Context, orgID string, na *store.NewAttachment) error {
	for _, c := range document.Chunks(na.Text) {
		if len(na.Chunks) == store.MaxAttachmentChunks {
			break
		}
		na.Chunks = append(na.Chunks, store.AttachmentChunk{Seq: len(na.Chunks), Text: c.Text})
	}
	if len(na.Chunks) == 0 || a.cfg.Embed == nil {
		return nil
	}
	e, err := a.cfg.Embed.Embedder(ctx, orgID)
	if err != nil || e == nil {
		return err
	}
	texts := make([]string, len(na.Chunks))
	for i, c := range na.Chunks {
		texts[i] = c.Text
	}
	vecs, err := embedAll(ctx, e, texts)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a.cfg.Logger.Warn("attachment: embedding failed; the file is searchable by its words only",
			"org", orgID, "attachment", na.ID, "err", err)
		return nil
	}
	na.Model = e.Model().String()
	for i := range na.Chunks {
		na.Chunks[i].Vector = embed.Pack(vecs[i])
	}
	return nil
}

// embedAll embeds texts in calls of at most embed.MaxTexts.
func embedAll(ctx context.Context, e embed.Embedder, texts []string) ([]embed.Vector, error) {
	var out []embed.Vector
	for start := 0; start < len(texts); start += embed.MaxTexts {
		vs, err := e.Embed(ctx, texts[start:min(start+embed.MaxTexts, len(texts))], embed.Document)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	if len(out) != len(texts) {
		return nil, fmt.Errorf("embed: %d vectors for %d texts", len(out), len(texts))
	}
	return out, nil
}

// oneLine keeps the first line of s, at most store.MaxAttachmentErrorBytes.
func oneLine(s string) string {
	s = store.PlainText(s)
	for i, r := range s {
		if r == '\n' || r == '\r' {
			s = s[:i]
			break
		}
	}
	if len(s) > store.MaxAttachmentErrorBytes {
		s = s[:store.MaxAttachmentErrorBytes]
		s = strings.ToValidUTF8(s, "")
	}
	return s
}

// List returns the conversation's attachments, oldest first.
func (a *Adder) List(ctx context.Context, orgID, conversationID string) ([]store.Attachment, error) {
	return a.cfg.Store.ListAttachments(ctx, orgID, conversationID)
}

// Get returns one attachment of the conversation, or store.ErrNotFound.
func (a *Adder) Get(ctx context.Context, orgID, conversationID, id string) (store.Attachment, error) {
	return a.cfg.Store.GetAttachment(ctx, orgID, conversationID, id)
}

// Data returns an attachment's file, or store.ErrNotFound.
func (a *Adder) Data(ctx context.Context, orgID, conversationID, id string) ([]byte, error) {
	return a.cfg.Store.AttachmentData(ctx, orgID, conversationID, id)
}

// Delete deletes an attachment with its file and index, or returns
// store.ErrNotFound.
func (a *Adder) Delete(ctx context.Context, orgID, conversationID, id string) error {
	return a.cfg.Store.DeleteAttachment(ctx, orgID, conversationID, id)
}
