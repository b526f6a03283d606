package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxBlobBytes is the largest blob PutBlob stores: 32 MiB. It covers
// what a blob is for (a PDF, an image, a spreadsheet, an audio clip, an
// artifact a turn made) and matches the largest request the model
// providers accept (Anthropic's Messages API takes 32 MB in all), so a
// bigger attachment could not reach a model anyway. It keeps rows small
// enough that both backends read a blob whole, in memory, in one query:
// a GetBlob costs the server its size, and every replica and backup
// carries it, so the cap bounds that cost per call. PostgreSQL's bytea
// tops out at 1 GB and SQLite's default at 1e9 bytes, far above it.
const MaxBlobBytes = 32 << 20

// MaxBlobPage is the most blobs one list call returns.
const MaxBlobPage = 100

// Bounds of a blob's text fields, in bytes.
const (
	// MaxBlobKeyBytes bounds OrgID, ID, OwnerID and ConversationID.
	MaxBlobKeyBytes = 255
	// MaxBlobNameBytes bounds Name (a file name, as most file systems).
	MaxBlobNameBytes = 255
	// MaxBlobMediaTypeBytes bounds MediaType.
	MaxBlobMediaTypeBytes = 255
)

// Errors of the blob repository, returned wrapped; test with errors.Is.
var (
	// ErrBlobTooLarge reports a blob over MaxBlobBytes; nothing is stored.
	ErrBlobTooLarge = errors.New("blob too large")
	// ErrBlobQuota reports a PutBlob that would take its owner past a
	// BlobQuota; nothing is stored.
	ErrBlobQuota = errors.New("blob quota exceeded")
	// ErrBlobInvalid reports a blob whose fields break a rule of
	// CheckBlob; nothing is stored.
	ErrBlobInvalid = errors.New("invalid blob")
)

// Blob is a file kept in the database: an attachment a person sent, an
// artifact a turn made. It belongs to one user (its owner) in one
// organisation and, optionally, to one conversation.
type Blob struct {
	OrgID string
	// ID is unique within the organisation.
	ID string
	// OwnerID is the user the blob belongs to and whose quota it uses.
	OwnerID string
	// ConversationID is the conversation the blob belongs to; "" for
	// none.
	ConversationID string
	// Name is the file name people see ("report.pdf"); it is not a path.
	Name string
	// MediaType is a MIME type, with parameters if any ("text/csv;
	// charset=utf-8").
	MediaType string
	// Size is len(Data); SHA256 the lower-case hex SHA-256 of Data. The
	// store computes both.
	Size   int64
	SHA256 string
	// CreatedAt orders lists, with ID.
	CreatedAt time.Time
	// Data is the content, byte for byte. GetBlob returns it (empty, not
	// nil, for an empty blob); StatBlob and the lists leave it nil.
	Data []byte
}

// BlobQuota caps what one owner may hold in one organisation. A zero
// field means no cap of that kind.
type BlobQuota struct {
	// MaxBytes caps the sum of the owner's blobs' sizes.
	MaxBytes int64
	// MaxCount caps the number of the owner's blobs.
	MaxCount int64
}

// BlobUsage is what one owner holds in one organisation.
type BlobUsage struct {
	Bytes int64
	Count int64
}

// BlobPage selects one page of a blob list. Lists are in (CreatedAt, ID)
// order, oldest first; a page holds the blobs after the one that
// AfterCreatedAt and AfterID name (the last of the previous page, as
// returned), or, with both zero, from the first. An AfterID that is not a
// ValidBlobKey names no blob and gives an empty page.
type BlobPage struct {
	AfterCreatedAt time.Time
	AfterID        string
	// Limit is the most blobs returned; zero, a negative value or one
	// over MaxBlobPage means MaxBlobPage.
	Limit int
}

// BlobList is one page of blobs, without their Data.
type BlobList struct {
	Blobs []Blob
	// More reports that blobs follow the last one of this page.
	More bool
}

// Blobs stores files in the database, so that every replica serves them.
// Every method is scoped to one organisation: a blob of another
// organisation is never returned, counted, listed or deleted, and an ID
// taken there is free here. Callers check that the blob's OwnerID or
// ConversationID is the turn's before they hand it out.
type Blobs interface {
	// PutBlob validates b with CheckBlob, then stores it with the Size
	// and SHA256 of its Data, and returns it as StatBlob would. A blob
	// over MaxBlobBytes gives ErrBlobTooLarge, an invalid one
	// ErrBlobInvalid, an ID taken in the organisation ErrExists, and a
	// blob that would take its owner past q ErrBlobQuota; each before
	// anything is written. The quota is checked and the blob stored
	// atomically: concurrent puts, from any number of processes, never
	// take the owner past q together.
	PutBlob(ctx context.Context, b Blob, q BlobQuota) (Blob, error)
	// GetBlob returns the blob with its Data, or ErrNotFound.
	GetBlob(ctx context.Context, orgID, id string) (Blob, error)
	// StatBlob returns the blob without its Data, or ErrNotFound.
	StatBlob(ctx context.Context, orgID, id string) (Blob, error)
	// ListConversationBlobs returns one page of the conversation's
	// blobs, without Data. An empty conversationID lists none.
	ListConversationBlobs(ctx context.Context, orgID, conversationID string, p BlobPage) (BlobList, error)
	// ListOwnerBlobs returns one page of the owner's blobs, in every
	// conversation and in none, without Data.
	ListOwnerBlobs(ctx context.Context, orgID, ownerID string, p BlobPage) (BlobList, error)
	// DeleteBlob deletes the blob, or returns ErrNotFound.
	DeleteBlob(ctx context.Context, orgID, id string) error
	// DeleteConversationBlobs deletes every blob of the conversation and
	// returns how many; an empty conversationID deletes none.
	DeleteConversationBlobs(ctx context.Context, orgID, conversationID string) (int64, error)
	// BlobUsage returns what the owner holds: the sum of sizes and the
	// number of blobs.
	BlobUsage(ctx context.Context, orgID, ownerID string) (BlobUsage, error)
}

// CheckBlob validates b for PutBlob and returns it with Size and SHA256
// computed from Data, CreatedAt in UTC and Data non-nil. It refuses, with
// an error wrapping ErrBlobTooLarge, Data over MaxBlobBytes (before
// hashing it), and, with ErrBlobInvalid: a missing OrgID, ID or OwnerID;
// a key (those and ConversationID) that is not a ValidBlobKey; a Name
// that is empty, over MaxBlobNameBytes, not UTF-8, holding a control
// character or a slash; a MediaType that is empty, too long or does not
// parse as a MIME type; a zero CreatedAt; a Size or SHA256 the caller set
// (a check against a truncated upload) that Data does not match.
// Backends call it first, so they accept and refuse the same blobs.
func CheckBlob(b Blob) (Blob, error) {
	if n := int64(len(b.Data)); n > MaxBlobBytes {
		return Blob{}, fmt.Errorf("blob %q is %d bytes; the limit is %d bytes (32 MiB): %w", b.Name, n, int64(MaxBlobBytes), ErrBlobTooLarge)
	}
	if err := checkBlobFields(b); err != nil {
		return Blob{}, fmt.Errorf("%w: %w", ErrBlobInvalid, err)
	}
	sum := sha256.Sum256(b.Data)
	digest := hex.EncodeToString(sum[:])
	switch size := int64(len(b.Data)); {
	case b.Size != 0 && b.Size != size:
		return Blob{}, fmt.Errorf("%w: Size is %d but the data is %d bytes", ErrBlobInvalid, b.Size, size)
	case b.SHA256 != "" && b.SHA256 != digest:
		return Blob{}, fmt.Errorf("%w: SHA256 %q does not match the data's %s", ErrBlobInvalid, b.SHA256, digest)
	}
	b.Size, b.SHA256, b.CreatedAt = int64(len(b.Data)), digest, b.CreatedAt.UTC()
	if b.Data == nil {
		b.Data = []byte{}
	}
	return b, nil
}

// checkBlobFields checks every field of b but Data, Size and SHA256.
func checkBlobFields(b Blob) error {
	for _, k := range []struct{ field, value string }{
		{"OrgID", b.OrgID}, {"ID", b.ID}, {"OwnerID", b.OwnerID},
	} {
		if k.value == "" {
			return fmt.Errorf("%s is empty", k.field)
		}
	}
	for _, k := range []struct{ field, value string }{
		{"OrgID", b.OrgID}, {"ID", b.ID}, {"OwnerID", b.OwnerID}, {"ConversationID", b.ConversationID},
	} {
		if !ValidBlobKey(k.value) {
			return fmt.Errorf("%s is over %d bytes, not UTF-8 or holds a NUL", k.field, MaxBlobKeyBytes)
		}
	}
	if err := checkBlobName(b.Name); err != nil {
		return err
	}
	if err := checkMediaType(b.MediaType); err != nil {
		return err
	}
	if b.CreatedAt.IsZero() {
		return errors.New("CreatedAt is zero")
	}
	return nil
}

// checkBlobName checks a blob's file name.
func checkBlobName(name string) error {
	switch {
	case name == "":
		return errors.New("Name is empty")
	case len(name) > MaxBlobNameBytes:
		return fmt.Errorf("Name is %d bytes; the limit is %d", len(name), MaxBlobNameBytes)
	case !utf8.ValidString(name):
		return errors.New("Name is not UTF-8")
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errors.New("Name holds a control character")
	case strings.ContainsAny(name, `/\`):
		return errors.New("Name holds a slash; it is a file name, not a path")
	}
	return nil
}

// checkMediaType checks a blob's MIME type.
func checkMediaType(mt string) error {
	switch {
	case mt == "":
		return errors.New("MediaType is empty")
	case len(mt) > MaxBlobMediaTypeBytes:
		return fmt.Errorf("MediaType is %d bytes; the limit is %d", len(mt), MaxBlobMediaTypeBytes)
	}
	if _, _, err := mime.ParseMediaType(mt); err != nil {
		return fmt.Errorf("MediaType %q: %w", mt, err)
	}
	return nil
}

// ValidBlobKey reports whether s may be a blob's OrgID, ID, OwnerID or
// ConversationID: at most MaxBlobKeyBytes of UTF-8 without NUL. A lookup
// by a key that is not valid finds nothing (PutBlob stores none), so
// backends answer it with ErrNotFound, or an empty list, without asking
// the database, whose text type may refuse such a key outright.
func ValidBlobKey(s string) bool {
	return len(s) <= MaxBlobKeyBytes && utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// Size returns the page size p asks for, bounded to [1, MaxBlobPage].
func (p BlobPage) Size() int {
	return boundedLimit(p.Limit, MaxBlobPage)
}

// CheckBlobQuota reports, with an error wrapping ErrBlobQuota that gives
// the numbers, whether adding b to an owner holding u breaks q. Backends
// call it with the usage they read in the transaction that stores b.
func CheckBlobQuota(u BlobUsage, b Blob, q BlobQuota) error {
	if q.MaxBytes > 0 && u.Bytes+b.Size > q.MaxBytes {
		return fmt.Errorf("blob %q (%d bytes) would take its owner to %d bytes; the limit is %d bytes (now %d): %w",
			b.Name, b.Size, u.Bytes+b.Size, q.MaxBytes, u.Bytes, ErrBlobQuota)
	}
	if q.MaxCount > 0 && u.Count+1 > q.MaxCount {
		return fmt.Errorf("blob %q would be its owner's blob number %d; the limit is %d: %w",
			b.Name, u.Count+1, q.MaxCount, ErrBlobQuota)
	}
	return nil
}

// boundedLimit is a page or search size asked for as limit, bounded to
// [1, most]: zero, a negative value or one over most means most.
func boundedLimit(limit, most int) int {
	if limit <= 0 || limit > most {
		return most
	}
	return limit
}
