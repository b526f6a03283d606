package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
)

// Bounds of the attachment repository.
const (
	// MaxAttachmentBytes is the largest file one attachment holds: 25
	// MiB, what document.Extract reads.
	MaxAttachmentBytes = 25 << 20
	// MaxAttachmentsPerConversation caps the files of one conversation.
	MaxAttachmentsPerConversation = 50
	// MaxConversationAttachmentBytes caps the bytes of one
	// conversation's files together.
	MaxConversationAttachmentBytes = 100 << 20
	// MaxAttachmentTextBytes bounds an attachment's extracted Text
	// (document.MaxTextBytes).
	MaxAttachmentTextBytes = 4 << 20
	// MaxAttachmentChunks bounds the chunks of one attachment
	// (document.MaxChunks).
	MaxAttachmentChunks = 6000
	// MaxAttachmentChunkBytes bounds one chunk's text (embed.MaxTextBytes).
	MaxAttachmentChunkBytes = 32 << 10
	// MaxAttachmentErrorBytes bounds Error.
	MaxAttachmentErrorBytes = 1000
	// MaxAttachmentHits is the most chunks one search returns.
	MaxAttachmentHits = 50
)

// Errors of the attachment repository, returned wrapped; test with
// errors.Is.
var (
	// ErrAttachmentInvalid reports an attachment that breaks a rule of
	// CheckAttachment; nothing is written.
	ErrAttachmentInvalid = errors.New("invalid attachment")
	// ErrAttachmentTooLarge reports a file over the per-file limit;
	// nothing is written.
	ErrAttachmentTooLarge = errors.New("attachment too large")
	// ErrAttachmentQuota reports a conversation that would go past its
	// count or bytes limit; nothing is written.
	ErrAttachmentQuota = errors.New("attachment quota exceeded")
)

// Attachment statuses.
const (
	// AttachmentReady is an attachment whose text was extracted and
	// indexed.
	AttachmentReady = "ready"
	// AttachmentUnreadable is one whose text could not be extracted (an
	// encrypted or damaged PDF); Error says why, in one line.
	AttachmentUnreadable = "unreadable"
)

// Attachment is a file attached to a conversation, with its extracted
// text. The file itself is a Blob of the same ID (deleting the
// conversation deletes both).
type Attachment struct {
	OrgID string
	// ID is unique within the organisation, among attachments and blobs.
	ID             string
	OwnerID        string
	ConversationID string
	// Name, MediaType, Size and SHA256 are the blob's.
	Name      string
	MediaType string
	Size      int64
	SHA256    string
	CreatedAt time.Time
	// Kind is what document.Extract detected ("text", "docx", "pdf");
	// "" for an unreadable file.
	Kind string
	// Status is AttachmentReady or AttachmentUnreadable; Error says why
	// an unreadable file is.
	Status string
	Error  string
	// Chars is the length of the extracted text in runes; NumChunks how
	// many chunks index it.
	Chars     int
	NumChunks int
	// Model is the embedding model of the chunks' vectors
	// (embed.Model.String); "" when they have none and are found by full
	// text only.
	Model string
}

// AttachmentChunk is one indexed piece of an attachment's text.
type AttachmentChunk struct {
	// Seq counts an attachment's chunks from 0.
	Seq  int
	Text string
	// Vector is Text's embedding by the attachment's Model; nil when it
	// has none.
	Vector embed.Packed
}

// NewAttachment is what PutAttachment stores: the attachment, the file,
// its extracted text and the chunks that index it.
type NewAttachment struct {
	Attachment
	Data   []byte
	Text   string
	Chunks []AttachmentChunk
}

// AttachmentQuota caps one conversation's attachments. A zero field
// means the repository's bound (MaxAttachmentBytes,
// MaxAttachmentsPerConversation, MaxConversationAttachmentBytes); a
// caller may lower a bound, never raise it.
type AttachmentQuota struct {
	MaxFileBytes int64
	MaxCount     int64
	MaxBytes     int64
}

// Limits returns q with every zero or too-high field replaced by the
// repository's bound.
func (q AttachmentQuota) Limits() AttachmentQuota {
	bound := func(v, max int64) int64 {
		if v <= 0 || v > max {
			return max
		}
		return v
	}
	return AttachmentQuota{
		MaxFileBytes: bound(q.MaxFileBytes, MaxAttachmentBytes),
		MaxCount:     bound(q.MaxCount, MaxAttachmentsPerConversation),
		MaxBytes:     bound(q.MaxBytes, MaxConversationAttachmentBytes),
	}
}

// AttachmentUsage is what a conversation holds.
type AttachmentUsage struct {
	Count int64
	Bytes int64
}

// AttachmentSearch is a full-text search of one conversation's chunks.
type AttachmentSearch struct {
	OrgID          string
	ConversationID string
	// Text is a bag of words (MemoryTerms), never a query language.
	Text string
	// Limit is the most chunks returned; zero, negative or over
	// MaxAttachmentHits means MaxAttachmentHits.
	Limit int
}

// Size returns the hits s asks for, bounded to [1, MaxAttachmentHits].
func (s AttachmentSearch) Size() int {
	return boundedLimit(s.Limit, MaxAttachmentHits)
}

// AttachmentHit is a chunk found, with the file it belongs to.
type AttachmentHit struct {
	// Ref is ChunkRef(AttachmentID, Seq): the ID the rankings use.
	Ref          string
	AttachmentID string
	Name         string
	Seq          int
	Text         string
}

// ChunkRef names an attachment's chunk in rankings: "id#seq".
func ChunkRef(attachmentID string, seq int) string {
	return attachmentID + "#" + strconv.Itoa(seq)
}

// ParseChunkRef splits a ChunkRef; ok is false for anything else.
func ParseChunkRef(ref string) (attachmentID string, seq int, ok bool) {
	i := strings.LastIndexByte(ref, '#')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(ref[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return ref[:i], n, true
}

// Attachments stores the files attached to conversations. Every method
// is scoped to one organisation and one conversation: another
// conversation's attachment is ErrNotFound, never a sign that it exists.
// Callers check that the conversation is the caller's before they call.
type Attachments interface {
	// PutAttachment validates a (CheckAttachment), then stores the file
	// (as the blob of the same ID), the attachment, its text and chunks
	// with their full-text terms, in one transaction, and returns the
	// attachment as stored. A file over q's per-file limit gives
	// ErrAttachmentTooLarge, a conversation that would go past q's count
	// or bytes ErrAttachmentQuota, an ID taken ErrExists, an invalid
	// attachment ErrAttachmentInvalid; each before anything is written.
	// Concurrent puts never take a conversation past q together.
	PutAttachment(ctx context.Context, a NewAttachment, q AttachmentQuota) (Attachment, error)
	// GetAttachment returns the attachment, or ErrNotFound.
	GetAttachment(ctx context.Context, orgID, conversationID, id string) (Attachment, error)
	// AttachmentData returns the attachment's file, or ErrNotFound.
	AttachmentData(ctx context.Context, orgID, conversationID, id string) ([]byte, error)
	// AttachmentText returns the attachment's extracted text ("" for an
	// unreadable file), or ErrNotFound.
	AttachmentText(ctx context.Context, orgID, conversationID, id string) (string, error)
	// ListAttachments returns the conversation's attachments, oldest
	// first (CreatedAt, ID): at most MaxAttachmentsPerConversation.
	ListAttachments(ctx context.Context, orgID, conversationID string) ([]Attachment, error)
	// CountAttachments returns how many files the conversation holds
	// (turn.Facts.Attachments).
	CountAttachments(ctx context.Context, orgID, conversationID string) (int, error)
	// AttachmentUsage returns what the conversation holds.
	AttachmentUsage(ctx context.Context, orgID, conversationID string) (AttachmentUsage, error)
	// DeleteAttachment deletes the attachment, its file, chunks and
	// full-text terms, or returns ErrNotFound.
	DeleteAttachment(ctx context.Context, orgID, conversationID, id string) error
	// SearchAttachments returns the conversation's chunks that hold any
	// term of s.Text (MemoryTerms), best first by full-text rank (BM25,
	// ts_rank), at most s.Size(). A text with no terms finds none.
	SearchAttachments(ctx context.Context, s AttachmentSearch) ([]AttachmentHit, error)
	// AttachmentVectors returns the Ref and vector of every chunk of the
	// conversation whose attachment's Model is model, for
	// retrieve.Nearest.
	AttachmentVectors(ctx context.Context, orgID, conversationID, model string) ([]retrieve.Candidate, error)
	// AttachmentChunks returns the chunks refs name (ChunkRef), in the
	// order of refs, with their attachment's name; refs naming no chunk
	// of the conversation are left out. At most MaxAttachmentHits refs
	// are read.
	AttachmentChunks(ctx context.Context, orgID, conversationID string, refs []string) ([]AttachmentHit, error)
}

// CheckAttachment validates a for PutAttachment against q (Limits) and
// returns it with Size, SHA256 and CreatedAt set as CheckBlob sets them
// and Chars and NumChunks counted. It refuses, with ErrAttachmentTooLarge,
// Data over the per-file limit, and with ErrAttachmentInvalid: a blob
// CheckBlob refuses; an empty ConversationID; a Status other than
// AttachmentReady or AttachmentUnreadable; an unreadable one with text,
// chunks or no Error; a Text over MaxAttachmentTextBytes or not valid
// UTF-8; over MaxAttachmentChunks chunks, out of sequence, empty, over
// MaxAttachmentChunkBytes or not plain text; vectors on chunks without a
// Model or a Model whose chunks lack them or hold another dimension.
func CheckAttachment(a NewAttachment, q AttachmentQuota) (NewAttachment, error) {
	q = q.Limits()
	if n := int64(len(a.Data)); n > q.MaxFileBytes {
		return NewAttachment{}, fmt.Errorf("%q is %d bytes; the limit for one file is %d bytes (%d MiB): %w",
			a.Name, n, q.MaxFileBytes, q.MaxFileBytes>>20, ErrAttachmentTooLarge)
	}
	b, err := CheckBlob(a.blob())
	if err != nil {
		return NewAttachment{}, fmt.Errorf("%w: %w", ErrAttachmentInvalid, err)
	}
	a.Size, a.SHA256, a.CreatedAt, a.Data = b.Size, b.SHA256, b.CreatedAt, b.Data
	if err := checkAttachment(a); err != nil {
		return NewAttachment{}, fmt.Errorf("%w: %w", ErrAttachmentInvalid, err)
	}
	a.Chars, a.NumChunks = utf8.RuneCountInString(a.Text), len(a.Chunks)
	return a, nil
}

// blob is the file of a as a Blob.
func (a NewAttachment) blob() Blob {
	return Blob{OrgID: a.OrgID, ID: a.ID, OwnerID: a.OwnerID, ConversationID: a.ConversationID,
		Name: a.Name, MediaType: a.MediaType, Size: a.Size, SHA256: a.SHA256, CreatedAt: a.CreatedAt, Data: a.Data}
}

// Blob returns the file of a as the blob PutAttachment stores.
func (a NewAttachment) Blob() Blob { return a.blob() }

func checkAttachment(a NewAttachment) error {
	if a.ConversationID == "" {
		return errors.New("ConversationID is empty")
	}
	switch a.Status {
	case AttachmentReady:
	case AttachmentUnreadable:
		if a.Text != "" || len(a.Chunks) > 0 || a.Error == "" {
			return errors.New("an unreadable attachment has no text nor chunks, and an Error")
		}
	default:
		return fmt.Errorf("Status %q is not %q nor %q", a.Status, AttachmentReady, AttachmentUnreadable)
	}
	if len(a.Error) > MaxAttachmentErrorBytes || PlainText(a.Error) != a.Error || strings.Contains(a.Error, "\n") {
		return fmt.Errorf("Error is over %d bytes or not one line of plain text", MaxAttachmentErrorBytes)
	}
	if len(a.Kind) > 16 || PlainText(a.Kind) != a.Kind {
		return errors.New("Kind is not a short plain word")
	}
	if len(a.Text) > MaxAttachmentTextBytes || !utf8.ValidString(a.Text) || strings.ContainsRune(a.Text, 0) {
		return fmt.Errorf("Text is over %d bytes, not UTF-8 or holds a NUL", MaxAttachmentTextBytes)
	}
	if len(a.Model) > MaxMemoryModelBytes || PlainText(a.Model) != a.Model {
		return errors.New("Model is too long or not plain text")
	}
	return checkChunks(a.Chunks, a.Model)
}

func checkChunks(chunks []AttachmentChunk, model string) error {
	if len(chunks) > MaxAttachmentChunks {
		return fmt.Errorf("%d chunks; the limit is %d", len(chunks), MaxAttachmentChunks)
	}
	dims := -1
	for i, c := range chunks {
		switch {
		case c.Seq != i:
			return fmt.Errorf("chunk %d has Seq %d", i, c.Seq)
		case strings.TrimSpace(c.Text) == "" || len(c.Text) > MaxAttachmentChunkBytes || PlainText(c.Text) != c.Text:
			return fmt.Errorf("chunk %d is empty, over %d bytes or not plain text", i, MaxAttachmentChunkBytes)
		case model == "" && c.Vector != nil:
			return fmt.Errorf("chunk %d has a vector but the attachment no Model", i)
		case model != "" && c.Vector == nil:
			return fmt.Errorf("chunk %d has no vector of Model %q", i, model)
		}
		if c.Vector == nil {
			continue
		}
		if err := c.Vector.Check(); err != nil {
			return fmt.Errorf("chunk %d: %w", i, err)
		}
		if dims >= 0 && c.Vector.Dims() != dims {
			return fmt.Errorf("chunk %d has %d dimensions, chunk 0 %d", i, c.Vector.Dims(), dims)
		}
		dims = c.Vector.Dims()
	}
	return nil
}

// CheckAttachmentQuota reports, with an error wrapping
// ErrAttachmentQuota that gives the numbers, whether adding a file of
// size bytes to a conversation holding u breaks q (Limits). Backends call
// it with the usage they read in the transaction that stores the file.
func CheckAttachmentQuota(u AttachmentUsage, name string, size int64, q AttachmentQuota) error {
	q = q.Limits()
	if u.Count+1 > q.MaxCount {
		return fmt.Errorf("the conversation holds %d files; the limit is %d: %w", u.Count, q.MaxCount, ErrAttachmentQuota)
	}
	if u.Bytes+size > q.MaxBytes {
		return fmt.Errorf("%q (%d bytes) would take the conversation's files to %d bytes; the limit is %d bytes (%d MiB): %w",
			name, size, u.Bytes+size, q.MaxBytes, q.MaxBytes>>20, ErrAttachmentQuota)
	}
	return nil
}

// AttachmentRefs returns the valid refs among refs, at most
// MaxAttachmentHits, in order, without repeats.
func AttachmentRefs(refs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range refs {
		if len(out) == MaxAttachmentHits {
			break
		}
		if _, _, ok := ParseChunkRef(r); ok && ValidBlobKey(r) && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
