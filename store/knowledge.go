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

// Bounds of the knowledge repository: each refused before anything is
// written.
const (
	// MaxKnowledgeFileBytes is the largest file an agent's knowledge
	// takes: 25 MiB, what document.Extract reads.
	MaxKnowledgeFileBytes = 25 << 20
	// MaxKnowledgeDocuments is how many documents (indexing, ready or
	// failed) one agent holds.
	MaxKnowledgeDocuments = 1000
	// MaxKnowledgeChunks is how many chunks one document is cut into, at
	// most (document.MaxChunks).
	MaxKnowledgeChunks = 6000
	// MaxKnowledgeAgentChunks is how many chunks one agent's documents
	// hold together: what a vector search reads, brute force, per call.
	MaxKnowledgeAgentChunks = 100_000
	// MaxKnowledgeChunkRunes bounds a chunk's text (document.ChunkMaxRunes
	// is 1,800).
	MaxKnowledgeChunkRunes = 2000
	// MaxKnowledgeBatch is the most chunks one AddKnowledgeChunks or
	// SetKnowledgeVectors call takes.
	MaxKnowledgeBatch = 512
	// MaxKnowledgeHits is the most chunks one SearchKnowledge call
	// returns.
	MaxKnowledgeHits = 50
	// MaxKnowledgeReasonBytes bounds a failed document's Reason.
	MaxKnowledgeReasonBytes = 1000
	// MaxKnowledgeAgentBytes bounds an agent's name as knowledge keys it.
	MaxKnowledgeAgentBytes = 255
)

// Errors of the knowledge repository, returned wrapped; test with
// errors.Is.
var (
	// ErrKnowledgeInvalid reports a document, chunk or search that breaks
	// a rule of the repository; nothing is written.
	ErrKnowledgeInvalid = errors.New("invalid knowledge")
	// ErrKnowledgeQuota reports a write that would take an agent past
	// MaxKnowledgeDocuments or MaxKnowledgeAgentChunks, or a document
	// past MaxKnowledgeChunks; nothing is written.
	ErrKnowledgeQuota = errors.New("knowledge limit exceeded")
)

// KnowledgeStatus is where a document's indexing is.
type KnowledgeStatus string

// Statuses of a knowledge document.
const (
	// KnowledgeIndexing: stored, its chunks being added; not searched.
	KnowledgeIndexing KnowledgeStatus = "indexing"
	// KnowledgeReady: every chunk added; searched.
	KnowledgeReady KnowledgeStatus = "ready"
	// KnowledgeFailed: indexing stopped; Reason says why, no chunk kept.
	KnowledgeFailed KnowledgeStatus = "failed"
)

// KnowledgeDocument is a file attached to an agent as knowledge: its
// metadata and indexing state (its text lives in its chunks).
type KnowledgeDocument struct {
	OrgID string
	// Agent is the name of the agent the document belongs to.
	Agent string
	// ID is unique within the organisation.
	ID string
	// Name is the file's name, MediaType the type it was given as; Size
	// its length in bytes.
	Name      string
	MediaType string
	Size      int64
	Status    KnowledgeStatus
	// Reason is why a failed document failed, one line; "" otherwise.
	Reason string
	// Chunks is how many chunks are stored; Total how many the document
	// makes (0 until its text is extracted): progress is Chunks/Total.
	Chunks int
	Total  int
	// CreatedAt orders lists, with ID; UpdatedAt is the last change of
	// status or progress.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// KnowledgeChunk is one piece of a document's text, with its embedding.
type KnowledgeChunk struct {
	// Seq counts a document's chunks from 0, in text order.
	Seq  int
	Text string
	// Model names the embedding model that made Vector (embed.Model
	// String); "" with a nil Vector when no model is configured: the
	// chunk is found by full text only until a re-index embeds it.
	Model  string
	Vector embed.Packed
}

// KnowledgeVector is a chunk's new embedding, for a re-index.
type KnowledgeVector struct {
	DocumentID string
	Seq        int
	Model      string
	Vector     embed.Packed
}

// KnowledgeHit is a chunk found, with the name of its document.
type KnowledgeHit struct {
	DocumentID string
	Name       string
	Seq        int
	Text       string
}

// ID is the hit's chunk ID (KnowledgeChunkID).
func (h KnowledgeHit) ID() string { return KnowledgeChunkID(h.DocumentID, h.Seq) }

// KnowledgeChunkID names a chunk among an agent's, as KnowledgeVectors'
// candidates and KnowledgeChunks' ids do: "documentID#seq".
func KnowledgeChunkID(documentID string, seq int) string {
	return documentID + "#" + strconv.Itoa(seq)
}

// ParseKnowledgeChunkID splits a KnowledgeChunkID; ok is false for any
// other string.
func ParseKnowledgeChunkID(id string) (documentID string, seq int, ok bool) {
	i := strings.LastIndexByte(id, '#')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.Atoi(id[i+1:])
	if err != nil || seq < 0 || strconv.Itoa(seq) != id[i+1:] {
		return "", 0, false
	}
	return id[:i], seq, true
}

// KnowledgeSearch is a full-text search of one agent's knowledge.
type KnowledgeSearch struct {
	OrgID string
	Agent string
	// Text is a bag of words (MemoryTerms), never a query language. At
	// most MaxMemoryQueryRunes runes.
	Text string
	// Limit is the most chunks returned; zero, a negative value or one
	// over MaxKnowledgeHits means MaxKnowledgeHits.
	Limit int
}

// Size returns the number of hits s asks for, bounded to [1,
// MaxKnowledgeHits].
func (s KnowledgeSearch) Size() int {
	return boundedLimit(s.Limit, MaxKnowledgeHits)
}

// Knowledge stores the documents attached to agents, chunked, with the
// full-text index and the vectors search_knowledge reads. Every method is
// scoped to one organisation and one agent: another organisation's or
// another agent's knowledge is never read, and a document out of scope is
// ErrNotFound. Only the chunks of ready documents are searched.
type Knowledge interface {
	// PutKnowledgeDocument validates d (CheckKnowledgeDocument) and
	// stores it as indexing, with no chunks, UpdatedAt its CreatedAt. An
	// ID taken in the organisation is ErrExists, an agent holding
	// MaxKnowledgeDocuments already ErrKnowledgeQuota; the count is
	// checked and the document stored atomically.
	PutKnowledgeDocument(ctx context.Context, d KnowledgeDocument) (KnowledgeDocument, error)
	// AddKnowledgeChunks appends chunks to an indexing document (their
	// Seq continuing from its Chunks), records total as the chunks it
	// makes and stamps UpdatedAt with at, in one transaction, and returns
	// the document. Chunks failing CheckKnowledgeChunks, a total under
	// the chunks stored or over MaxKnowledgeChunks, and a document not
	// indexing are ErrKnowledgeInvalid; a write taking the agent past
	// MaxKnowledgeAgentChunks is ErrKnowledgeQuota; a document of another
	// agent, or none, ErrNotFound.
	AddKnowledgeChunks(ctx context.Context, orgID, agent, id string, total int, chunks []KnowledgeChunk, at time.Time) (KnowledgeDocument, error)
	// FinishKnowledgeDocument ends an indexing document's indexing: with
	// reason "" it is ready (Total set to Chunks), else failed with
	// reason (one line, at most MaxKnowledgeReasonBytes) and its chunks
	// deleted. A document not indexing is ErrKnowledgeInvalid.
	FinishKnowledgeDocument(ctx context.Context, orgID, agent, id, reason string, at time.Time) (KnowledgeDocument, error)
	// GetKnowledgeDocument returns the agent's document or ErrNotFound.
	GetKnowledgeDocument(ctx context.Context, orgID, agent, id string) (KnowledgeDocument, error)
	// ListKnowledgeDocuments returns the agent's documents, oldest first
	// by (CreatedAt, ID): at most MaxKnowledgeDocuments.
	ListKnowledgeDocuments(ctx context.Context, orgID, agent string) ([]KnowledgeDocument, error)
	// DeleteKnowledgeDocument deletes the agent's document, its chunks,
	// vectors and full-text rows, or returns ErrNotFound.
	DeleteKnowledgeDocument(ctx context.Context, orgID, agent, id string) error
	// DeleteAgentKnowledge deletes every document of the agent and
	// returns how many. DeleteAgent does it too, in its transaction.
	DeleteAgentKnowledge(ctx context.Context, orgID, agent string) (int64, error)
	// HasKnowledge reports whether the agent has a ready document.
	HasKnowledge(ctx context.Context, orgID, agent string) (bool, error)
	// SearchKnowledge returns the chunks of the agent's ready documents
	// holding any term of s.Text (MemoryTerms), best first by the
	// backend's full-text rank, at most s.Size(). A text over
	// MaxMemoryQueryRunes is ErrKnowledgeInvalid; one with no terms finds
	// none.
	SearchKnowledge(ctx context.Context, s KnowledgeSearch) ([]KnowledgeHit, error)
	// KnowledgeVectors returns the chunk ID (KnowledgeChunkID) and vector
	// of every chunk of the agent's ready documents whose Model is model,
	// for retrieve.Nearest: a vector of another model is never returned.
	KnowledgeVectors(ctx context.Context, orgID, agent, model string) ([]retrieve.Candidate, error)
	// KnowledgeChunks returns the chunks of the agent's ready documents
	// that ids (KnowledgeChunkID) name, in the order of ids; an ID naming
	// none is left out. At most MaxKnowledgeBatch ids.
	KnowledgeChunks(ctx context.Context, orgID, agent string, ids []string) ([]KnowledgeHit, error)
	// DocumentKnowledgeChunks returns up to limit (bounded to
	// MaxKnowledgeBatch) chunks of the agent's ready document id whose Seq
	// is from or more, in Seq order: what read_document joins into the
	// document's text (document.JoinChunks), page by page of the store. A
	// document of another agent or organisation, none, or one not ready
	// gives none.
	DocumentKnowledgeChunks(ctx context.Context, orgID, agent, id string, from, limit int) ([]KnowledgeHit, error)
	// StaleKnowledgeChunks returns up to limit (bounded to
	// MaxKnowledgeBatch) chunks of the agent's ready documents whose
	// Model is not model, in (document, seq) order: what a re-index
	// embeds again.
	StaleKnowledgeChunks(ctx context.Context, orgID, agent, model string, limit int) ([]KnowledgeHit, error)
	// SetKnowledgeVectors replaces the model and vector of the agent's
	// chunks vs name (at most MaxKnowledgeBatch, each vector passing
	// embed.Packed.Check with its model's dimension) in one transaction,
	// and returns how many it changed; a chunk naming none is skipped.
	SetKnowledgeVectors(ctx context.Context, orgID, agent string, vs []KnowledgeVector) (int64, error)
}

// CheckKnowledgeDocument validates d for PutKnowledgeDocument and
// returns it as stored: status indexing, no chunks, Reason "", times in
// UTC, UpdatedAt its CreatedAt. It refuses, with an error wrapping
// ErrKnowledgeInvalid, a missing OrgID, Agent or ID or one that is not a
// ValidBlobKey, a Name or MediaType a blob could not have, a Size below
// 0, and a zero CreatedAt; with ErrKnowledgeQuota a Size over
// MaxKnowledgeFileBytes.
func CheckKnowledgeDocument(d KnowledgeDocument) (KnowledgeDocument, error) {
	if d.Size > MaxKnowledgeFileBytes {
		return KnowledgeDocument{}, fmt.Errorf("%s is %d bytes; the limit is %d (25 MiB): %w", d.Name, d.Size, MaxKnowledgeFileBytes, ErrKnowledgeQuota)
	}
	if err := checkKnowledgeDocument(d); err != nil {
		return KnowledgeDocument{}, fmt.Errorf("%w: %w", ErrKnowledgeInvalid, err)
	}
	d.Status, d.Reason, d.Chunks, d.Total = KnowledgeIndexing, "", 0, 0
	d.CreatedAt = d.CreatedAt.UTC()
	d.UpdatedAt = d.CreatedAt
	return d, nil
}

func checkKnowledgeDocument(d KnowledgeDocument) error {
	for _, k := range []struct{ field, value string }{{"OrgID", d.OrgID}, {"Agent", d.Agent}, {"ID", d.ID}} {
		switch {
		case k.value == "":
			return fmt.Errorf("%s is empty", k.field)
		case !ValidBlobKey(k.value):
			return fmt.Errorf("%s is over %d bytes, not UTF-8 or holds a NUL", k.field, MaxBlobKeyBytes)
		}
	}
	if strings.ContainsRune(d.ID, '#') {
		return errors.New("ID holds '#'")
	}
	if err := checkBlobName(d.Name); err != nil {
		return err
	}
	if err := checkMediaType(d.MediaType); err != nil {
		return err
	}
	if d.Size < 0 {
		return fmt.Errorf("Size is %d", d.Size)
	}
	if d.CreatedAt.IsZero() {
		return errors.New("CreatedAt is zero")
	}
	return nil
}

// CheckKnowledgeChunks validates chunks for AddKnowledgeChunks on a
// document holding have chunks and making total: at most
// MaxKnowledgeBatch chunks, Seq running from have, have+len(chunks) <=
// total <= MaxKnowledgeChunks, each Text non-blank within
// MaxKnowledgeChunkRunes, each Model and Vector both empty or checked as
// CheckMemory checks a memory's. It returns the chunks with Text as
// PlainText; errors wrap ErrKnowledgeInvalid, or ErrKnowledgeQuota for a
// total over MaxKnowledgeChunks.
func CheckKnowledgeChunks(have, total int, chunks []KnowledgeChunk) ([]KnowledgeChunk, error) {
	switch {
	case total > MaxKnowledgeChunks:
		return nil, fmt.Errorf("the document makes %d chunks; the limit is %d: %w", total, MaxKnowledgeChunks, ErrKnowledgeQuota)
	case len(chunks) > MaxKnowledgeBatch:
		return nil, fmt.Errorf("%w: %d chunks in one call; the limit is %d", ErrKnowledgeInvalid, len(chunks), MaxKnowledgeBatch)
	case total < have+len(chunks):
		return nil, fmt.Errorf("%w: total %d is under the %d chunks stored and added", ErrKnowledgeInvalid, total, have+len(chunks))
	}
	out := make([]KnowledgeChunk, len(chunks))
	for i, c := range chunks {
		if c.Seq != have+i {
			return nil, fmt.Errorf("%w: chunk %d has Seq %d, want %d", ErrKnowledgeInvalid, i, c.Seq, have+i)
		}
		if err := checkKnowledgeChunk(c); err != nil {
			return nil, fmt.Errorf("%w: chunk %d: %w", ErrKnowledgeInvalid, c.Seq, err)
		}
		c.Text = PlainText(c.Text)
		out[i] = c
	}
	return out, nil
}

func checkKnowledgeChunk(c KnowledgeChunk) error {
	if n := utf8.RuneCountInString(c.Text); n > MaxKnowledgeChunkRunes {
		return fmt.Errorf("Text is %d characters; the limit is %d", n, MaxKnowledgeChunkRunes)
	}
	if strings.TrimSpace(c.Text) == "" {
		return errors.New("Text is empty")
	}
	if c.Model == "" && c.Vector == nil {
		return nil
	}
	return checkVector(c.Model, c.Vector)
}

// checkVector checks a model name and its vector as CheckMemory does.
func checkVector(model string, v embed.Packed) error {
	m := Memory{OrgID: "o", ID: "i", Text: "t", CreatedAt: time.Unix(1, 0), Model: model, Vector: v}
	return checkMemory(m)
}

// CheckKnowledgeVectors validates vs for SetKnowledgeVectors: at most
// MaxKnowledgeBatch, each naming a chunk (a valid DocumentID, Seq >= 0)
// with a model and vector CheckMemory would accept.
func CheckKnowledgeVectors(vs []KnowledgeVector) error {
	if len(vs) > MaxKnowledgeBatch {
		return fmt.Errorf("%w: %d vectors in one call; the limit is %d", ErrKnowledgeInvalid, len(vs), MaxKnowledgeBatch)
	}
	for i, v := range vs {
		if v.DocumentID == "" || !ValidBlobKey(v.DocumentID) || v.Seq < 0 {
			return fmt.Errorf("%w: vector %d names no chunk", ErrKnowledgeInvalid, i)
		}
		if err := checkVector(v.Model, v.Vector); err != nil {
			return fmt.Errorf("%w: vector %d: %w", ErrKnowledgeInvalid, i, err)
		}
	}
	return nil
}

// CheckKnowledgeReason returns reason as a failed document keeps it: one
// line of plain text, cut to MaxKnowledgeReasonBytes at a rune boundary.
func CheckKnowledgeReason(reason string) string {
	reason = strings.Join(strings.Fields(PlainText(reason)), " ")
	if len(reason) <= MaxKnowledgeReasonBytes {
		return reason
	}
	cut := MaxKnowledgeReasonBytes
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut]
}

// CheckKnowledgeDocumentCount reports, wrapping ErrKnowledgeQuota, an
// agent holding n documents that may not add one.
func CheckKnowledgeDocumentCount(agent string, n int64) error {
	if n >= MaxKnowledgeDocuments {
		return fmt.Errorf("agent %q holds %d documents; the limit is %d: %w", agent, n, MaxKnowledgeDocuments, ErrKnowledgeQuota)
	}
	return nil
}

// CheckKnowledgeAgentChunks reports, wrapping ErrKnowledgeQuota, an
// agent holding n chunks that may not add more.
func CheckKnowledgeAgentChunks(agent string, n int64, more int) error {
	if n+int64(more) > MaxKnowledgeAgentChunks {
		return fmt.Errorf("agent %q would hold %d chunks; the limit is %d: %w", agent, n+int64(more), MaxKnowledgeAgentChunks, ErrKnowledgeQuota)
	}
	return nil
}

// CheckKnowledgeSearch validates s: a Text over MaxMemoryQueryRunes
// gives an error wrapping ErrKnowledgeInvalid.
func CheckKnowledgeSearch(s KnowledgeSearch) error {
	if n := utf8.RuneCountInString(s.Text); n > MaxMemoryQueryRunes {
		return fmt.Errorf("%w: the search text is %d characters; the limit is %d", ErrKnowledgeInvalid, n, MaxMemoryQueryRunes)
	}
	return nil
}

// KnowledgeBatchSize bounds limit to [1, MaxKnowledgeBatch].
func KnowledgeBatchSize(limit int) int {
	if limit <= 0 || limit > MaxKnowledgeBatch {
		return MaxKnowledgeBatch
	}
	return limit
}
