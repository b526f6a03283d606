package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of the artifact repository.
const (
	// MaxArtifactBytes is the largest content one version or draft holds.
	MaxArtifactBytes = 1 << 20
	// MaxArtifactPatchBytes bounds the patch kept with an update.
	MaxArtifactPatchBytes = 256 << 10
	// MaxArtifactTitleBytes bounds a title.
	MaxArtifactTitleBytes = 200
	// MaxArtifactVersions is the most versions one artifact keeps: a
	// change past it is refused (the model starts a new artifact).
	MaxArtifactVersions = 100
	// MaxArtifactsPerConversation caps the artifacts of one conversation.
	MaxArtifactsPerConversation = 50
	// MaxConversationArtifactBytes caps the bytes of one conversation's
	// artifacts together: every version's content and patch, and every
	// draft.
	MaxConversationArtifactBytes = 64 << 20
)

// Artifact kinds.
const (
	ArtifactMarkdown = "markdown"
	ArtifactHTML     = "html"
	ArtifactSVG      = "svg"
	ArtifactCSV      = "csv"
	ArtifactCode     = "code"
	ArtifactMermaid  = "mermaid"
)

// ArtifactKinds lists the kinds in documentation order.
var ArtifactKinds = []string{ArtifactMarkdown, ArtifactHTML, ArtifactSVG, ArtifactCSV, ArtifactCode, ArtifactMermaid}

// Visual reports whether kind is one a browser renders (HTML, SVG): its
// changes are drafts, checked before they are saved.
func Visual(kind string) bool { return kind == ArtifactHTML || kind == ArtifactSVG }

// The changes a version or draft records.
const (
	ArtifactCreate  = "create"
	ArtifactRewrite = "rewrite"
	ArtifactUpdate  = "update"
)

// Errors of the artifact repository, returned wrapped; test with
// errors.Is.
var (
	// ErrArtifactInvalid reports an artifact or change that breaks a rule
	// of CheckArtifact; nothing is written.
	ErrArtifactInvalid = errors.New("invalid artifact")
	// ErrArtifactQuota reports a conversation or artifact past a limit
	// (count, bytes, versions); nothing is written.
	ErrArtifactQuota = errors.New("artifact quota exceeded")
	// ErrArtifactNoDraft reports a save or inspection mark of an artifact
	// without a draft.
	ErrArtifactNoDraft = errors.New("the artifact has no draft")
	// ErrArtifactNotInspected reports a save of a draft changed since it
	// was last inspected (or never inspected); nothing is written.
	ErrArtifactNotInspected = errors.New("the draft was not inspected since its last change")
)

// Artifact is a document a person keeps, made in a conversation: its
// saved versions and, for a visual kind, the draft being checked.
type Artifact struct {
	OrgID          string
	ID             string
	OwnerID        string
	ConversationID string
	Title          string
	// Kind is one of ArtifactKinds; Language names a code artifact's
	// language ("python"), "" for other kinds.
	Kind     string
	Language string
	// Version is the newest saved version, counted from 1; 0 while the
	// artifact has only its first draft.
	Version int
	// Content is the newest saved version's content; filled by
	// GetArtifact, "" in lists.
	Content   string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Draft is the pending change of a visual artifact, nil when none.
	Draft *ArtifactDraft
}

// ArtifactDraft is a visual artifact's change waiting to be saved.
type ArtifactDraft struct {
	// Rev counts the artifact's draft changes, from 1, never reused: an
	// inspection is of one Rev.
	Rev int
	// InspectedRev is the Rev last inspected; a draft saves only when it
	// equals Rev.
	InspectedRev int
	Title        string
	// Change is ArtifactCreate, ArtifactRewrite or ArtifactUpdate; Patch
	// the update's edits as given (JSON), "" for the others.
	Change    string
	Patch     string
	Content   string
	UpdatedAt time.Time
}

// Inspected reports whether the draft was inspected since its last
// change.
func (d *ArtifactDraft) Inspected() bool { return d != nil && d.InspectedRev == d.Rev }

// ArtifactVersion is one saved version.
type ArtifactVersion struct {
	ArtifactID string
	Version    int
	Title      string
	// Change is how the version was made; Patch an update's edits.
	Change string
	Patch  string
	// Content is filled by GetArtifactVersion, "" in lists; Size is its
	// length in bytes either way.
	Content string
	Size    int
	// Checked reports a visual version saved after an inspection; false
	// for the other kinds and for a visual one saved where no browser
	// could check it.
	Checked   bool
	TurnID    string
	CreatedAt time.Time
}

// NewArtifact is what CreateArtifact stores: the artifact with its
// first content (Artifact.Content), as version 1 or, when AsDraft, as
// its first draft.
type NewArtifact struct {
	Artifact
	AsDraft bool
	TurnID  string
}

// ArtifactChange is a rewrite or update of an artifact. Base is the
// state it was computed from: a write finding another refuses with
// ErrConflict, so two writers never lose one another's change.
type ArtifactChange struct {
	OrgID          string
	ConversationID string
	ID             string
	// Title, when not empty, replaces the title.
	Title   string
	Change  string
	Patch   string
	Content string
	// AsDraft makes the change the artifact's draft (replacing one
	// there) instead of a new version; a change that is not a draft
	// drops the draft.
	AsDraft bool
	Base    ArtifactBase
	TurnID  string
	At      time.Time
}

// ArtifactBase is the state a change was computed from: the newest
// version and the draft's Rev (0 when there was no draft).
type ArtifactBase struct {
	Version  int
	DraftRev int
}

// Base returns the state a change of a is computed from.
func (a Artifact) Base() ArtifactBase {
	b := ArtifactBase{Version: a.Version}
	if a.Draft != nil {
		b.DraftRev = a.Draft.Rev
	}
	return b
}

// ArtifactQuota caps one conversation's artifacts. A zero field means
// the repository's bound; a caller may lower a bound, never raise it.
type ArtifactQuota struct {
	MaxCount int64
	MaxBytes int64
}

// Limits returns q with every zero or too-high field replaced by the
// repository's bound.
func (q ArtifactQuota) Limits() ArtifactQuota {
	bound := func(v, max int64) int64 {
		if v <= 0 || v > max {
			return max
		}
		return v
	}
	return ArtifactQuota{MaxCount: bound(q.MaxCount, MaxArtifactsPerConversation),
		MaxBytes: bound(q.MaxBytes, MaxConversationArtifactBytes)}
}

// ArtifactUsage is what a conversation's artifacts hold: how many, and
// their bytes as MaxConversationArtifactBytes counts them.
type ArtifactUsage struct {
	Count int64
	Bytes int64
}

// Artifacts stores the artifacts of conversations. Every method is
// scoped to one organisation and one conversation: another
// conversation's artifact is ErrNotFound, never a sign that it exists.
// Callers check that the conversation is the caller's before they call.
type Artifacts interface {
	// CreateArtifact validates a (CheckArtifact) and stores it with its
	// first content, as version 1 or (a.AsDraft) as draft Rev 1, in one
	// transaction. An ID taken gives ErrExists, a conversation past q
	// ErrArtifactQuota, an invalid artifact ErrArtifactInvalid, each
	// before anything is written; concurrent creates never take a
	// conversation past q together.
	CreateArtifact(ctx context.Context, a NewArtifact, q ArtifactQuota) (Artifact, error)
	// ChangeArtifact validates c (CheckArtifactChange) and, in one
	// transaction, refuses a state other than c.Base (ErrConflict), a
	// version past MaxArtifactVersions or a conversation past q
	// (ErrArtifactQuota), then stores c as a new version or as the draft,
	// and returns the artifact as it now is.
	ChangeArtifact(ctx context.Context, c ArtifactChange, q ArtifactQuota) (Artifact, error)
	// MarkArtifactInspected records that draft rev was inspected. A draft
	// changed since (another Rev) gives ErrConflict, none
	// ErrArtifactNoDraft.
	MarkArtifactInspected(ctx context.Context, orgID, conversationID, id string, rev int) error
	// SaveArtifactDraft makes the draft a new version (Checked), drops it
	// and returns the artifact. A draft not inspected since its last
	// change gives ErrArtifactNotInspected, none ErrArtifactNoDraft, a
	// version past MaxArtifactVersions ErrArtifactQuota; each writes
	// nothing.
	SaveArtifactDraft(ctx context.Context, orgID, conversationID, id, turnID string, at time.Time) (Artifact, error)
	// GetArtifact returns the artifact with its newest version's content
	// and its draft, or ErrNotFound.
	GetArtifact(ctx context.Context, orgID, conversationID, id string) (Artifact, error)
	// GetArtifactVersion returns one saved version with its content, or
	// ErrNotFound.
	GetArtifactVersion(ctx context.Context, orgID, conversationID, id string, version int) (ArtifactVersion, error)
	// ListArtifacts returns the conversation's artifacts, oldest first
	// (CreatedAt, ID), without contents (a draft's Content empty too).
	ListArtifacts(ctx context.Context, orgID, conversationID string) ([]Artifact, error)
	// ListArtifactVersions returns the artifact's versions, oldest
	// first, without contents, or ErrNotFound.
	ListArtifactVersions(ctx context.Context, orgID, conversationID, id string) ([]ArtifactVersion, error)
	// ArtifactUsage returns what the conversation's artifacts hold.
	ArtifactUsage(ctx context.Context, orgID, conversationID string) (ArtifactUsage, error)
	// DeleteArtifact deletes the artifact with its versions and draft,
	// or returns ErrNotFound.
	DeleteArtifact(ctx context.Context, orgID, conversationID, id string) error
}

// languagePattern is a code artifact's language: a short lower-case
// word ("python", "c++", "c#", "objective-c").
var languagePattern = regexp.MustCompile(`^[a-z][a-z0-9+#.-]{0,31}$`)

// CheckArtifact validates a for CreateArtifact and returns it with its
// title cleaned, UTC times, UpdatedAt set to CreatedAt and Version 1
// (0 for a draft). It refuses with ErrArtifactInvalid: an ID that is
// empty or not a key (ValidBlobKey); an empty OrgID, OwnerID or
// ConversationID; a kind not in ArtifactKinds; a Language on a kind other
// than code, or one that is not a short lower-case word; a draft of a
// kind that is not Visual; a title or content CheckArtifactChange would
// refuse; a zero CreatedAt.
func CheckArtifact(a NewArtifact) (NewArtifact, error) {
	switch {
	case a.OrgID == "" || a.OwnerID == "" || a.ConversationID == "":
		return NewArtifact{}, fmt.Errorf("%w: OrgID, OwnerID and ConversationID are required", ErrArtifactInvalid)
	case a.ID == "" || !ValidBlobKey(a.ID) || PlainText(a.ID) != a.ID:
		return NewArtifact{}, fmt.Errorf("%w: ID %q is not a key", ErrArtifactInvalid, a.ID)
	case !validKind(a.Kind):
		return NewArtifact{}, fmt.Errorf("%w: kind %q is not one of %s", ErrArtifactInvalid, a.Kind, strings.Join(ArtifactKinds, ", "))
	case a.Kind != ArtifactCode && a.Language != "":
		return NewArtifact{}, fmt.Errorf("%w: a language is only for a code artifact", ErrArtifactInvalid)
	case a.Language != "" && !languagePattern.MatchString(a.Language):
		return NewArtifact{}, fmt.Errorf("%w: language %q is not a short lower-case word", ErrArtifactInvalid, a.Language)
	case a.AsDraft && !Visual(a.Kind):
		return NewArtifact{}, fmt.Errorf("%w: only HTML and SVG artifacts have drafts", ErrArtifactInvalid)
	case a.CreatedAt.IsZero():
		return NewArtifact{}, fmt.Errorf("%w: CreatedAt is zero", ErrArtifactInvalid)
	}
	title, err := checkArtifactTitle(a.Title, true)
	if err != nil {
		return NewArtifact{}, err
	}
	if err := checkArtifactContent(a.Content); err != nil {
		return NewArtifact{}, err
	}
	a.Title, a.CreatedAt = title, a.CreatedAt.UTC()
	a.UpdatedAt, a.Version, a.Artifact.Draft = a.CreatedAt, 1, nil
	if a.AsDraft {
		a.Version = 0
		a.Artifact.Draft = &ArtifactDraft{Rev: 1, Title: title, Change: ArtifactCreate, Content: a.Content, UpdatedAt: a.CreatedAt}
		a.Content = ""
	}
	return a, nil
}

func validKind(kind string) bool {
	for _, k := range ArtifactKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// CheckArtifactChange validates c for ChangeArtifact and returns it with
// its title cleaned and its time in UTC. It refuses with
// ErrArtifactInvalid: an empty OrgID, ConversationID or ID; a Change
// other than ArtifactRewrite or ArtifactUpdate; a Patch on a rewrite, or
// one over MaxArtifactPatchBytes or not UTF-8; a title over
// MaxArtifactTitleBytes or not one line; content that is blank, over
// MaxArtifactBytes, not UTF-8 or holding a NUL; a zero At.
func CheckArtifactChange(c ArtifactChange) (ArtifactChange, error) {
	switch {
	case c.OrgID == "" || c.ConversationID == "" || c.ID == "" || !ValidBlobKey(c.ID):
		return ArtifactChange{}, fmt.Errorf("%w: OrgID, ConversationID and ID are required", ErrArtifactInvalid)
	case c.Change != ArtifactRewrite && c.Change != ArtifactUpdate:
		return ArtifactChange{}, fmt.Errorf("%w: change %q is not %s nor %s", ErrArtifactInvalid, c.Change, ArtifactRewrite, ArtifactUpdate)
	case c.Change == ArtifactRewrite && c.Patch != "":
		return ArtifactChange{}, fmt.Errorf("%w: a rewrite has no patch", ErrArtifactInvalid)
	case len(c.Patch) > MaxArtifactPatchBytes || !utf8.ValidString(c.Patch) || strings.ContainsRune(c.Patch, 0):
		return ArtifactChange{}, fmt.Errorf("%w: the patch is over %d bytes, not UTF-8 or holds a NUL", ErrArtifactInvalid, MaxArtifactPatchBytes)
	case c.At.IsZero():
		return ArtifactChange{}, fmt.Errorf("%w: At is zero", ErrArtifactInvalid)
	}
	title, err := checkArtifactTitle(c.Title, false)
	if err != nil {
		return ArtifactChange{}, err
	}
	if err := checkArtifactContent(c.Content); err != nil {
		return ArtifactChange{}, err
	}
	c.Title, c.At = title, c.At.UTC()
	return c, nil
}

// checkArtifactTitle returns the title cleaned (one line, spaces
// collapsed); an empty one is refused when required.
func checkArtifactTitle(title string, required bool) (string, error) {
	t := strings.Join(strings.Fields(PlainText(title)), " ")
	switch {
	case t == "" && required:
		return "", fmt.Errorf("%w: the title is empty", ErrArtifactInvalid)
	case len(t) > MaxArtifactTitleBytes:
		return "", fmt.Errorf("%w: the title is %d bytes; the limit is %d", ErrArtifactInvalid, len(t), MaxArtifactTitleBytes)
	}
	return t, nil
}

func checkArtifactContent(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("%w: the content is empty", ErrArtifactInvalid)
	case len(s) > MaxArtifactBytes:
		return fmt.Errorf("%w: the content is %d bytes; an artifact holds at most %d bytes (%d KiB)",
			ErrArtifactQuota, len(s), MaxArtifactBytes, MaxArtifactBytes>>10)
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return fmt.Errorf("%w: the content is not UTF-8 text or holds a NUL", ErrArtifactInvalid)
	}
	return nil
}

// CheckArtifactQuota reports, with an error wrapping ErrArtifactQuota
// that gives the numbers, whether a conversation holding u may take
// newArtifacts more artifacts and add bytes under q (Limits). Backends
// call it with the usage they read in the transaction that writes.
func CheckArtifactQuota(u ArtifactUsage, newArtifacts, bytes int64, q ArtifactQuota) error {
	q = q.Limits()
	if u.Count+newArtifacts > q.MaxCount {
		return fmt.Errorf("the conversation holds %d artifacts; the limit is %d: %w", u.Count, q.MaxCount, ErrArtifactQuota)
	}
	if u.Bytes+bytes > q.MaxBytes {
		return fmt.Errorf("this change would take the conversation's artifacts to %d bytes; the limit is %d bytes (%d MiB): %w",
			u.Bytes+bytes, q.MaxBytes, q.MaxBytes>>20, ErrArtifactQuota)
	}
	return nil
}

// CheckArtifactVersions refuses, wrapping ErrArtifactQuota, a new version
// of an artifact that has version versions already.
func CheckArtifactVersions(version int) error {
	if version >= MaxArtifactVersions {
		return fmt.Errorf("the artifact has %d versions, the most one keeps; create a new artifact: %w", version, ErrArtifactQuota)
	}
	return nil
}

// MergeDraftChange returns the change and patch a draft records when a
// change (change, patch) replaces a draft that recorded (prev,
// prevPatch); prev "" means there was no draft. A first draft stays a
// create and a rewrite stays a rewrite (the new content is whole, so a
// patch adds nothing); updates after updates keep every patch, one per
// line, as long as they fit MaxArtifactPatchBytes, and drop them past it
// (the version still holds the content).
func MergeDraftChange(prev, prevPatch, change, patch string) (string, string) {
	switch {
	case prev == ArtifactCreate:
		return ArtifactCreate, ""
	case prev == ArtifactRewrite || change == ArtifactRewrite:
		return ArtifactRewrite, ""
	case prev == ArtifactUpdate:
		if merged := prevPatch + "\n" + patch; len(merged) <= MaxArtifactPatchBytes {
			return ArtifactUpdate, merged
		}
		return ArtifactUpdate, ""
	}
	return change, patch
}

// ArtifactBytes is what content and patch count toward
// MaxConversationArtifactBytes.
func ArtifactBytes(content, patch string) int64 { return int64(len(content) + len(patch)) }

// StoredArtifact is an artifact as a backend reads it inside a write:
// with the draft counters, kept when there is no draft, and the bytes its
// versions hold. Backends hand it to ApplyArtifactChange, SaveDraft and
// CheckInspection, which hold the rules both backends share.
type StoredArtifact struct {
	Artifact
	DraftRev     int
	InspectedRev int
	VersionBytes int64
}

// Bytes is what the artifact counts toward MaxConversationArtifactBytes.
func (s StoredArtifact) Bytes() int64 {
	n := s.VersionBytes
	if d := s.Draft; d != nil {
		n += ArtifactBytes(d.Content, d.Patch)
	}
	return n
}

// ArtifactState is what a write makes of an artifact: its row (Artifact,
// with the draft's content, and the counters) and the version it adds,
// if any.
type ArtifactState struct {
	Artifact     Artifact
	DraftRev     int
	InspectedRev int
	NewVersion   *ArtifactVersion
	// Bytes is what the artifact will count toward
	// MaxConversationArtifactBytes.
	Bytes int64
}

// ApplyArtifactChange returns what c, checked (CheckArtifactChange),
// makes of a. It refuses a that is not in c.Base's state (ErrConflict),
// a draft of a kind that is not Visual (ErrArtifactInvalid) and a new
// version past MaxArtifactVersions (ErrArtifactQuota).
func ApplyArtifactChange(a StoredArtifact, c ArtifactChange) (ArtifactState, error) {
	if a.Base() != c.Base {
		return ArtifactState{}, fmt.Errorf("artifact %q is at version %d, draft %d, not version %d, draft %d: %w",
			a.ID, a.Version, a.Base().DraftRev, c.Base.Version, c.Base.DraftRev, ErrConflict)
	}
	if c.AsDraft && !Visual(a.Kind) {
		return ArtifactState{}, fmt.Errorf("%w: only HTML and SVG artifacts have drafts", ErrArtifactInvalid)
	}
	title := a.Title
	if a.Draft != nil {
		title = a.Draft.Title
	}
	if c.Title != "" {
		title = c.Title
	}
	next := a.Artifact
	next.UpdatedAt = c.At
	st := ArtifactState{DraftRev: a.DraftRev, InspectedRev: a.InspectedRev}
	if c.AsDraft {
		var prev, prevPatch string
		if a.Draft != nil {
			prev, prevPatch = a.Draft.Change, a.Draft.Patch
		}
		change, patch := MergeDraftChange(prev, prevPatch, c.Change, c.Patch)
		st.DraftRev = a.DraftRev + 1
		next.Draft = &ArtifactDraft{Rev: st.DraftRev, InspectedRev: a.InspectedRev, Title: title, Change: change,
			Patch: patch, Content: c.Content, UpdatedAt: c.At}
		st.Artifact, st.Bytes = next, a.VersionBytes+ArtifactBytes(c.Content, patch)
		return st, nil
	}
	if err := CheckArtifactVersions(a.Version); err != nil {
		return ArtifactState{}, err
	}
	next.Version, next.Title, next.Content, next.Draft = a.Version+1, title, c.Content, nil
	st.NewVersion = &ArtifactVersion{ArtifactID: a.ID, Version: next.Version, Title: title, Change: c.Change,
		Patch: c.Patch, Content: c.Content, Size: len(c.Content), TurnID: c.TurnID, CreatedAt: c.At}
	st.Artifact, st.Bytes = next, a.VersionBytes+ArtifactBytes(c.Content, c.Patch)
	return st, nil
}

// SaveDraft returns what saving a's draft makes of it: a new version,
// Checked, and no draft. It refuses an artifact without a draft
// (ErrArtifactNoDraft), a draft not inspected since its last change
// (ErrArtifactNotInspected) and a version past MaxArtifactVersions
// (ErrArtifactQuota).
func SaveDraft(a StoredArtifact, turnID string, at time.Time) (ArtifactState, error) {
	d := a.Draft
	switch {
	case d == nil:
		return ArtifactState{}, fmt.Errorf("artifact %q: %w", a.ID, ErrArtifactNoDraft)
	case !d.Inspected():
		return ArtifactState{}, fmt.Errorf("artifact %q, draft %d: %w", a.ID, d.Rev, ErrArtifactNotInspected)
	}
	if err := CheckArtifactVersions(a.Version); err != nil {
		return ArtifactState{}, err
	}
	at = at.UTC()
	next := a.Artifact
	next.Version, next.Title, next.Content, next.Draft, next.UpdatedAt = a.Version+1, d.Title, d.Content, nil, at
	v := &ArtifactVersion{ArtifactID: a.ID, Version: next.Version, Title: d.Title, Change: d.Change, Patch: d.Patch,
		Content: d.Content, Size: len(d.Content), Checked: true, TurnID: turnID, CreatedAt: at}
	return ArtifactState{Artifact: next, DraftRev: a.DraftRev, InspectedRev: a.InspectedRev, NewVersion: v,
		Bytes: a.VersionBytes + ArtifactBytes(d.Content, d.Patch)}, nil
}

// CheckInspection refuses marking rev of a inspected when a has no draft
// (ErrArtifactNoDraft) or its draft is another Rev (ErrConflict: it
// changed since the inspection began).
func CheckInspection(a StoredArtifact, rev int) error {
	switch {
	case a.Draft == nil:
		return fmt.Errorf("artifact %q: %w", a.ID, ErrArtifactNoDraft)
	case a.Draft.Rev != rev:
		return fmt.Errorf("artifact %q: the draft is %d, not %d: %w", a.ID, a.Draft.Rev, rev, ErrConflict)
	}
	return nil
}
