package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
)

// Bounds of the memory repository.
const (
	// MaxMemoryRunes bounds a memory's Text: a memory is a fact or a
	// preference in a few sentences, not a document (documents are
	// chunked into knowledge).
	MaxMemoryRunes = 2000
	// MaxMemoriesPerOwner caps how many memories one owner (a person, or
	// "" for the organisation's shared ones) holds in one organisation.
	MaxMemoriesPerOwner = 10_000
	// MaxMemoryPage is the most memories one ListMemories call returns.
	MaxMemoryPage = 100
	// MaxMemoryHits is the most memories one SearchMemories call returns.
	MaxMemoryHits = 50
	// MaxMemoryQueryRunes bounds a search text.
	MaxMemoryQueryRunes = 2000
	// MaxMemoryQueryTerms is how many distinct terms of a search text
	// SearchMemories looks for; the rest are ignored.
	MaxMemoryQueryTerms = 64
	// MaxMemoryModelBytes bounds Model.
	MaxMemoryModelBytes = 255
	// MaxMemoryTermBytes bounds a term of MemoryTerms: a longer run of
	// letters (a hash, a base64 string) is no word anyone searches for,
	// and PostgreSQL refuses a lexeme over 2,047 bytes.
	MaxMemoryTermBytes = 100
)

// Errors of the memory repository, returned wrapped; test with errors.Is.
var (
	// ErrMemoryInvalid reports a memory or a search that breaks a rule of
	// CheckMemory or CheckMemorySearch; nothing is written.
	ErrMemoryInvalid = errors.New("invalid memory")
	// ErrMemoryQuota reports a PutMemory that would take its owner past
	// MaxMemoriesPerOwner; nothing is written.
	ErrMemoryQuota = errors.New("memory quota exceeded")
)

// Memory is something an agent remembers: a person's own (OwnerID, the
// user) or the organisation's, shared by every person in it (OwnerID "").
type Memory struct {
	OrgID string
	// ID is unique within the organisation.
	ID string
	// OwnerID is the user the memory belongs to; "" for a memory the
	// organisation shares.
	OwnerID string
	// Text is what is remembered: at most MaxMemoryRunes runes, stored
	// as PlainText.
	Text string
	// CreatedAt orders lists, with ID; UpdatedAt is when Text last
	// changed.
	CreatedAt time.Time
	UpdatedAt time.Time
	// Model names the embedding model that made Vector, as
	// embed.Model.String gives it ("local:ngram-512/512"); MemoryVectors
	// returns only the vectors of the model asked for, so a change of
	// model never mixes vectors.
	Model string
	// Vector is Text's embedding in its stored form. The lists and
	// searches leave it nil; GetMemory and MemoryVectors return it.
	Vector embed.Packed
}

// MemoryPage selects one page of a memory list, newest first: (CreatedAt,
// ID) descending. A page holds the memories before the one BeforeCreatedAt
// and BeforeID name (the last of the previous page), or, with both zero,
// from the newest.
type MemoryPage struct {
	BeforeCreatedAt time.Time
	BeforeID        string
	// Limit is the most memories returned; zero, a negative value or one
	// over MaxMemoryPage means MaxMemoryPage.
	Limit int
}

// Size returns the page size p asks for, bounded to [1, MaxMemoryPage].
func (p MemoryPage) Size() int {
	return boundedLimit(p.Limit, MaxMemoryPage)
}

// MemoryList is one page of memories, without their vectors.
type MemoryList struct {
	Memories []Memory
	// More reports that older memories follow the last of this page.
	More bool
}

// MemorySearch is a full-text search of the memories a person sees.
type MemorySearch struct {
	OrgID string
	// OwnerID is the person searching: their memories and the
	// organisation's shared ones are searched, nobody else's. "" searches
	// the shared ones only.
	OwnerID string
	// OwnerOnly searches OwnerID's own memories alone, not the shared
	// ones (a person's own list, searched).
	OwnerOnly bool
	// Text is a bag of words (MemoryTerms), never a query language: any
	// text is safe. At most MaxMemoryQueryRunes runes.
	Text string
	// Limit is the most memories returned; zero, a negative value or one
	// over MaxMemoryHits means MaxMemoryHits.
	Limit int
}

// Also is the owner searched besides OwnerID: "" (the shared memories),
// or OwnerID itself with OwnerOnly.
func (s MemorySearch) Also() string {
	if s.OwnerOnly {
		return s.OwnerID
	}
	return ""
}

// Size returns the number of hits s asks for, bounded to [1,
// MaxMemoryHits].
func (s MemorySearch) Size() int {
	return boundedLimit(s.Limit, MaxMemoryHits)
}

// Memories stores long-term memories. Every method is scoped to one
// organisation and one owner: a person reaches their own memories, and
// reads (SearchMemories, MemoryVectors) the organisation's shared ones
// too, never another person's nor another organisation's; a memory out of
// scope is ErrNotFound, never a sign that it exists elsewhere.
type Memories interface {
	// PutMemory validates m with CheckMemory and stores it, with
	// UpdatedAt its CreatedAt, and returns it as stored. limit caps the
	// memories m's owner may hold (MemoryLimit: at most
	// MaxMemoriesPerOwner, which 0 means). An invalid memory gives
	// ErrMemoryInvalid, an ID taken in the organisation ErrExists, an
	// owner at the cap already ErrMemoryQuota; each before anything is
	// written. The count is checked and the memory stored atomically:
	// concurrent puts, from any number of processes, never take an owner
	// past the cap together.
	PutMemory(ctx context.Context, m Memory, limit int64) (Memory, error)
	// UpdateMemory replaces the Text, Model and Vector of the memory that
	// m's OrgID, OwnerID and ID name, stamping UpdatedAt with m.UpdatedAt,
	// and returns it as stored. m passes CheckMemoryUpdate (its CreatedAt
	// is ignored); a memory of another owner, or none, is ErrNotFound.
	UpdateMemory(ctx context.Context, m Memory) (Memory, error)
	// GetMemory returns the owner's memory with its vector, or
	// ErrNotFound (a shared memory is got with ownerID "").
	GetMemory(ctx context.Context, orgID, ownerID, id string) (Memory, error)
	// ListMemories returns one page of the owner's memories ("" lists the
	// shared ones), newest first, without vectors.
	ListMemories(ctx context.Context, orgID, ownerID string, p MemoryPage) (MemoryList, error)
	// DeleteMemory deletes the owner's memory, its vector and its
	// full-text entry, or returns ErrNotFound.
	DeleteMemory(ctx context.Context, orgID, ownerID, id string) error
	// DeleteOwnerMemories deletes every memory of the owner and returns
	// how many: what deleting a user does. An ownerID of "" deletes none
	// (the shared memories go with the organisation).
	DeleteOwnerMemories(ctx context.Context, orgID, ownerID string) (int64, error)
	// DeleteOrgMemories deletes every memory of the organisation, shared
	// and personal, and returns how many: what deleting an organisation
	// does.
	DeleteOrgMemories(ctx context.Context, orgID string) (int64, error)
	// CountMemories returns how many memories the owner holds.
	CountMemories(ctx context.Context, orgID, ownerID string) (int64, error)
	// SearchMemories returns the memories s's owner sees that hold any
	// of the terms of s.Text (MemoryTerms), best first by the backend's
	// full-text rank (BM25 on SQLite, ts_rank on PostgreSQL), at most
	// s.Size(), without vectors. A text with no terms finds none; one
	// over MaxMemoryQueryRunes gives ErrMemoryInvalid.
	SearchMemories(ctx context.Context, s MemorySearch) ([]Memory, error)
	// MemoryVectors returns the ID and vector of every memory the owner
	// sees (theirs and the shared ones) whose Model is model, for
	// retrieve.Nearest: at most 2*MaxMemoriesPerOwner of them. The
	// vectors may be shared with the backend's cache (VectorCache), which
	// keeps an owner's until any process changes their memories: read
	// them, never write them.
	MemoryVectors(ctx context.Context, orgID, ownerID, model string) ([]retrieve.Candidate, error)
}

// CheckMemory validates m for PutMemory and UpdateMemory and returns it
// with Text as PlainText, its times in UTC and UpdatedAt set to CreatedAt
// when zero. It refuses, with an error wrapping ErrMemoryInvalid: a
// missing OrgID or ID; a key (those and OwnerID) that is not a
// ValidBlobKey; a Text that is empty or blank or over MaxMemoryRunes
// runes; a zero CreatedAt; an empty Model or one over MaxMemoryModelBytes
// or not plain text; a Vector that does not pass embed.Packed.Check or
// whose dimension is not the one Model ends with ("/512").
func CheckMemory(m Memory) (Memory, error) {
	if err := checkMemory(m); err != nil {
		return Memory{}, fmt.Errorf("%w: %w", ErrMemoryInvalid, err)
	}
	m.Text = PlainText(m.Text)
	m.CreatedAt = m.CreatedAt.UTC()
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	m.UpdatedAt = m.UpdatedAt.UTC()
	return m, nil
}

func checkMemory(m Memory) error {
	switch {
	case m.OrgID == "":
		return errors.New("OrgID is empty")
	case m.ID == "":
		return errors.New("ID is empty")
	}
	for _, k := range []struct{ field, value string }{{"OrgID", m.OrgID}, {"ID", m.ID}, {"OwnerID", m.OwnerID}} {
		if !ValidBlobKey(k.value) {
			return fmt.Errorf("%s is over %d bytes, not UTF-8 or holds a NUL", k.field, MaxBlobKeyBytes)
		}
	}
	if n := utf8.RuneCountInString(m.Text); n > MaxMemoryRunes {
		return fmt.Errorf("Text is %d characters; the limit is %d", n, MaxMemoryRunes)
	}
	if strings.TrimSpace(m.Text) == "" {
		return errors.New("Text is empty")
	}
	if m.CreatedAt.IsZero() {
		return errors.New("CreatedAt is zero")
	}
	switch {
	case m.Model == "":
		return errors.New("Model is empty")
	case len(m.Model) > MaxMemoryModelBytes:
		return fmt.Errorf("Model is %d bytes; the limit is %d", len(m.Model), MaxMemoryModelBytes)
	case PlainText(m.Model) != m.Model:
		return errors.New("Model is not plain text")
	}
	if err := m.Vector.Check(); err != nil {
		return fmt.Errorf("Vector: %w", err)
	}
	if i := strings.LastIndexByte(m.Model, '/'); i >= 0 {
		if dims, err := strconv.Atoi(m.Model[i+1:]); err == nil && dims != m.Vector.Dims() {
			return fmt.Errorf("Vector has %d dimensions; Model %q says %d", m.Vector.Dims(), m.Model, dims)
		}
	}
	return nil
}

// CheckMemoryUpdate validates m for UpdateMemory: CheckMemory's rules,
// with UpdatedAt in place of CreatedAt (which an update never changes). It
// returns m with Text as PlainText and UpdatedAt in UTC.
func CheckMemoryUpdate(m Memory) (Memory, error) {
	if m.UpdatedAt.IsZero() {
		return Memory{}, fmt.Errorf("%w: UpdatedAt is zero", ErrMemoryInvalid)
	}
	m.CreatedAt = m.UpdatedAt
	return CheckMemory(m)
}

// CheckMemorySearch validates s: a Text over MaxMemoryQueryRunes gives
// an error wrapping ErrMemoryInvalid.
func CheckMemorySearch(s MemorySearch) error {
	if n := utf8.RuneCountInString(s.Text); n > MaxMemoryQueryRunes {
		return fmt.Errorf("%w: the search text is %d characters; the limit is %d", ErrMemoryInvalid, n, MaxMemoryQueryRunes)
	}
	return nil
}

// MemoryLimit is the cap PutMemory applies for limit: limit itself
// between 1 and MaxMemoriesPerOwner, MaxMemoriesPerOwner otherwise (a
// caller can lower the cap, never raise it).
func MemoryLimit(limit int64) int64 {
	if limit <= 0 || limit > MaxMemoriesPerOwner {
		return MaxMemoriesPerOwner
	}
	return limit
}

// CheckMemoryCount reports, with an error wrapping ErrMemoryQuota, an
// owner holding n memories who may not add one under limit (MemoryLimit).
// Backends call it with the count they read in the transaction that
// stores the memory.
func CheckMemoryCount(n, limit int64) error {
	if limit = MemoryLimit(limit); n >= limit {
		return fmt.Errorf("the owner holds %d memories; the limit is %d: %w", n, limit, ErrMemoryQuota)
	}
	return nil
}

// MemoryTerms is the full-text index's words of s, the same for the text
// stored and the text searched, on every backend: s folded (FoldText),
// split into runs of letters, digits and marks; each run as written and,
// when it differs, without its diacritics (so "Hà Nội" and "ha noi"
// match; đ counts as d); and in scripts written without spaces (Han,
// Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) every pair of adjacent
// characters instead (a run of one, itself). A term over
// MaxMemoryTermBytes is left out. Terms are distinct, in the
// order they first appear. Backends index and search these terms as
// literal words, so no input is ever read as query syntax.
func MemoryTerms(s string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if t != "" && len(t) <= MaxMemoryTermBytes && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	s = FoldText(s)
	word := func(w []rune) {
		if len(w) == 0 {
			return
		}
		if unspaced(w[0]) {
			if len(w) == 1 {
				add(string(w))
			}
			for i := 0; i+1 < len(w); i++ {
				add(string(w[i : i+2]))
			}
			return
		}
		if len(w) == 1 && unicode.IsLetter(w[0]) {
			return // "s" of "user's", "a", "I": in every text, telling none apart
		}
		add(string(w))
		add(bare(string(w)))
	}
	var run []rune
	for _, r := range s {
		isWord := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
		if isWord && len(run) > 0 && unicode.IsLetter(r) && unspaced(r) != unspaced(run[0]) {
			word(run)
			run = run[:0]
		}
		if isWord {
			run = append(run, r)
			continue
		}
		word(run)
		run = run[:0]
	}
	word(run)
	return out
}

// unspaced reports a letter of a script written without spaces (with
// the prolonged sound mark ー, full and half width, which Unicode puts in
// no script but only Japanese writes).
func unspaced(r rune) bool {
	return r == 0x30FC || r == 0xFF70 ||
		unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// bare is w without its combining marks (decomposed, marks dropped,
// recomposed), with đ as d; "" when w has none to drop.
func bare(w string) string {
	d := norm.NFD.String(w)
	var b strings.Builder
	for _, r := range d {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'đ':
			b.WriteRune('d')
		default:
			b.WriteRune(r)
		}
	}
	out := norm.NFC.String(b.String())
	if out == w {
		return ""
	}
	return out
}

// MemoryTermLimit is MemoryTerms of a search text, at most
// MaxMemoryQueryTerms of them.
func MemoryTermLimit(s string) []string {
	t := MemoryTerms(s)
	if len(t) > MaxMemoryQueryTerms {
		t = t[:MaxMemoryQueryTerms]
	}
	return t
}
