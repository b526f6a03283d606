package store

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of the skills repository, each refused before anything is
// written. The name and description rules are the Agent Skills format's.
const (
	// MaxSkillNameBytes bounds a skill's name (1 to 64 characters of
	// a-z, 0-9 and '-').
	MaxSkillNameBytes = 64
	// MaxSkillDescriptionRunes bounds a skill's description.
	MaxSkillDescriptionRunes = 1024
	// MaxSkillDocumentBytes bounds SKILL.md: 256 KiB.
	MaxSkillDocumentBytes = 256 << 10
	// MaxSkillFiles is how many files a skill holds besides SKILL.md.
	MaxSkillFiles = 100
	// MaxSkillFileBytes bounds one file: 1 MiB.
	MaxSkillFileBytes = 1 << 20
	// MaxSkillTotalBytes bounds a skill's files together (SKILL.md not
	// counted): 8 MiB.
	MaxSkillTotalBytes = 8 << 20
	// MaxSkillPathBytes bounds a file's path.
	MaxSkillPathBytes = 1024
	// MaxSkillsPerOrg is how many skills one organisation holds.
	MaxSkillsPerOrg = 200
	// MaxSkillAgentBytes bounds an agent's name as attachments key it.
	MaxSkillAgentBytes = 255
)

// SkillDocument is the name of the file that holds a skill's front
// matter and instructions, at the root of its folder; Skill.Document
// holds it, so no file of Skill.Files may take that path.
const SkillDocument = "SKILL.md"

// Errors of the skills repository, returned wrapped; test with errors.Is.
var (
	// ErrSkillInvalid reports a skill, name or path that breaks a rule of
	// the repository; nothing is written.
	ErrSkillInvalid = errors.New("invalid skill")
	// ErrSkillQuota reports a skill over a size or count bound, or an
	// organisation holding MaxSkillsPerOrg already; nothing is written.
	ErrSkillQuota = errors.New("skill limit exceeded")
)

// Skill is an organisation's skill in the Agent Skills folder format:
// SKILL.md (Document, front matter included, as imported) and the other
// files of its folder.
type Skill struct {
	OrgID string
	// Name is unique within the organisation (CheckSkillName).
	Name string
	// Description is what the agent's prompt lists: what the skill does
	// and when to use it.
	Description string
	// Document is SKILL.md's text, what load_skill returns.
	Document string
	// Files are the folder's other files, sorted by Path. GetSkill and
	// PutSkill give their Path and Size only (Data nil); lists leave Files
	// nil (FileCount and FileBytes say what there is); ReadSkillFile reads
	// one's bytes.
	Files []SkillFile
	// FileCount and FileBytes are how many files the skill holds besides
	// SKILL.md and their bytes together; every read sets them.
	FileCount int
	FileBytes int64
	// CreatedAt is when the name was first stored; UpdatedAt when it was
	// last replaced.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SkillFile is one file of a skill's folder.
type SkillFile struct {
	// Path is relative to the folder, with '/' between its parts
	// (CheckSkillPath).
	Path string
	// Size is len(Data) when Data is read.
	Size int64
	Data []byte
}

// Skills stores an organisation's skills and which agents they are
// attached to (an agent's name and a skill's name, in one organisation).
// Every method is scoped to one organisation: another organisation's
// skills are never read, and a skill out of scope is ErrNotFound.
type Skills interface {
	// PutSkill validates s (CheckSkill) and stores it, replacing the
	// organisation's skill of that name (its document, description and
	// every file, in one transaction; its CreatedAt and attachments
	// kept, UpdatedAt set to s.UpdatedAt) or adding one. An organisation
	// holding MaxSkillsPerOrg skills may replace one but not add one:
	// ErrSkillQuota. It returns the skill as GetSkill would.
	PutSkill(ctx context.Context, s Skill) (Skill, error)
	// GetSkill returns the skill with its Document and its files' paths
	// and sizes (no Data), or ErrNotFound.
	GetSkill(ctx context.Context, orgID, name string) (Skill, error)
	// ListSkills returns the organisation's skills by name, without
	// Document or Files (FileCount and FileBytes set): at most
	// MaxSkillsPerOrg, in one query however many files they hold.
	ListSkills(ctx context.Context, orgID string) ([]Skill, error)
	// ReadSkillFile returns the file of the skill at path, Data read, or
	// ErrNotFound for a skill or path that is not there.
	ReadSkillFile(ctx context.Context, orgID, name, path string) (SkillFile, error)
	// DeleteSkill deletes the skill and its files and detaches it from
	// every agent, in one transaction, or returns ErrNotFound.
	DeleteSkill(ctx context.Context, orgID, name string) error
	// AttachSkill attaches the organisation's skill name to the agent
	// (whose name is checked as a key, not looked up: agents may live in
	// configuration files). An unknown skill is ErrNotFound, an agent
	// name that is empty or over MaxSkillAgentBytes ErrSkillInvalid; a
	// skill attached already is attached again without error.
	AttachSkill(ctx context.Context, orgID, agent, name string, at time.Time) error
	// DetachSkill detaches the skill from the agent, or returns
	// ErrNotFound when it was not attached.
	DetachSkill(ctx context.Context, orgID, agent, name string) error
	// AgentSkills returns the skills attached to the agent, by name, as
	// ListSkills gives them.
	AgentSkills(ctx context.Context, orgID, agent string) ([]Skill, error)
	// DeleteAgentSkills detaches every skill from the agent and returns
	// how many were attached. DeleteAgent does it too, in its
	// transaction.
	DeleteAgentSkills(ctx context.Context, orgID, agent string) (int64, error)
}

// CheckSkillName validates a skill's name as the Agent Skills format
// states it: 1 to MaxSkillNameBytes characters, lowercase ASCII letters,
// digits and '-', neither first nor last, never two in a row. Errors
// wrap ErrSkillInvalid.
func CheckSkillName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: the name is empty", ErrSkillInvalid)
	case len(name) > MaxSkillNameBytes:
		return fmt.Errorf("%w: the name is %d characters; the limit is %d", ErrSkillInvalid, len(name), MaxSkillNameBytes)
	case strings.ContainsFunc(name, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' }):
		return fmt.Errorf("%w: the name %q holds a character other than a-z, 0-9 and '-'", ErrSkillInvalid, name)
	case name[0] == '-' || name[len(name)-1] == '-':
		return fmt.Errorf("%w: the name %q begins or ends with '-'", ErrSkillInvalid, name)
	case strings.Contains(name, "--"):
		return fmt.Errorf("%w: the name %q holds two '-' in a row", ErrSkillInvalid, name)
	}
	return nil
}

// CheckSkillDescription validates a description: not blank, valid
// UTF-8 without control characters other than tab and newline, at most
// MaxSkillDescriptionRunes characters. Errors wrap ErrSkillInvalid.
func CheckSkillDescription(d string) error {
	switch {
	case strings.TrimSpace(d) == "":
		return fmt.Errorf("%w: the description is empty", ErrSkillInvalid)
	case !utf8.ValidString(d) || strings.ContainsFunc(d, badTextRune):
		return fmt.Errorf("%w: the description is not UTF-8 text", ErrSkillInvalid)
	case utf8.RuneCountInString(d) > MaxSkillDescriptionRunes:
		return fmt.Errorf("%w: the description is %d characters; the limit is %d", ErrSkillInvalid, utf8.RuneCountInString(d), MaxSkillDescriptionRunes)
	}
	return nil
}

// badTextRune reports a control character other than tab, newline and
// carriage return.
func badTextRune(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f
}

// reservedSkillNames are the device names Windows refuses as a file name
// (with or without an extension), so that a skill's folder can be
// written out anywhere.
var reservedSkillNames = []string{"con", "prn", "aux", "nul",
	"com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8", "com9",
	"lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9"}

// CheckSkillPath validates a file's path in a skill's folder: relative,
// '/' between its parts, already clean (no empty part, no "." or ".."),
// no backslash, colon or control character, at most MaxSkillPathBytes and
// 255 bytes a part, valid UTF-8, no part a reserved device name (con,
// nul, com1, ...), and not SKILL.md at the root (the Document holds it).
// Errors wrap ErrSkillInvalid.
func CheckSkillPath(p string) error {
	bad := func(why string) error { return fmt.Errorf("%w: file path %q %s", ErrSkillInvalid, p, why) }
	switch {
	case p == "":
		return fmt.Errorf("%w: a file path is empty", ErrSkillInvalid)
	case len(p) > MaxSkillPathBytes:
		return bad(fmt.Sprintf("is %d bytes; the limit is %d", len(p), MaxSkillPathBytes))
	case !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return bad("is not UTF-8 text")
	case strings.HasPrefix(p, "/"):
		return bad("is absolute")
	case strings.ContainsAny(p, `\:`):
		return bad(`holds '\' or ':'`)
	case path.Clean(p) != p:
		return bad("is not clean (an empty part, '.' or '..')")
	case p == SkillDocument:
		return bad("is the skill's own document")
	}
	for part := range strings.SplitSeq(p, "/") {
		if part == ".." || part == "." {
			return bad("leaves the folder")
		}
		if len(part) > 255 {
			return bad("has a part over 255 bytes")
		}
		base, _, _ := strings.Cut(strings.ToLower(part), ".")
		if slices.Contains(reservedSkillNames, base) {
			return bad("has a reserved name")
		}
	}
	return nil
}

// CheckSkill validates s for PutSkill and returns it as stored: files
// sorted by Path with Size set, FileCount and FileBytes set, times in UTC, CreatedAt its UpdatedAt
// when zero. It refuses, with an error wrapping ErrSkillInvalid, an
// OrgID that is empty or not a ValidBlobKey, a bad name (CheckSkillName),
// description (CheckSkillDescription) or path (CheckSkillPath), two files
// of one path, a Document that is blank or not UTF-8 text, and a zero
// UpdatedAt; with ErrSkillQuota a Document over MaxSkillDocumentBytes,
// more than MaxSkillFiles files, a file over MaxSkillFileBytes and files
// over MaxSkillTotalBytes together.
func CheckSkill(s Skill) (Skill, error) {
	if s.OrgID == "" || !ValidBlobKey(s.OrgID) {
		return Skill{}, fmt.Errorf("%w: the organisation is empty or not a key", ErrSkillInvalid)
	}
	if err := CheckSkillName(s.Name); err != nil {
		return Skill{}, err
	}
	if err := CheckSkillDescription(s.Description); err != nil {
		return Skill{}, err
	}
	if err := checkSkillSizes(s); err != nil {
		return Skill{}, err
	}
	switch {
	case strings.TrimSpace(s.Document) == "":
		return Skill{}, fmt.Errorf("%w: %s is empty", ErrSkillInvalid, SkillDocument)
	case !utf8.ValidString(s.Document) || strings.ContainsRune(s.Document, 0):
		return Skill{}, fmt.Errorf("%w: %s is not UTF-8 text", ErrSkillInvalid, SkillDocument)
	case s.UpdatedAt.IsZero():
		return Skill{}, fmt.Errorf("%w: UpdatedAt is zero", ErrSkillInvalid)
	}
	files := make([]SkillFile, len(s.Files))
	for i, f := range s.Files {
		if err := CheckSkillPath(f.Path); err != nil {
			return Skill{}, err
		}
		files[i] = SkillFile{Path: f.Path, Size: int64(len(f.Data)), Data: f.Data}
	}
	slices.SortFunc(files, func(a, b SkillFile) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return Skill{}, fmt.Errorf("%w: two files at %q", ErrSkillInvalid, files[i].Path)
		}
	}
	s.Files = files
	s.FileCount, s.FileBytes = len(files), 0
	for _, f := range files {
		s.FileBytes += f.Size
	}
	s.UpdatedAt = s.UpdatedAt.UTC()
	if s.CreatedAt.IsZero() {
		s.CreatedAt = s.UpdatedAt
	}
	s.CreatedAt = s.CreatedAt.UTC()
	return s, nil
}

// checkSkillSizes refuses, wrapping ErrSkillQuota, a skill past a size
// or count bound.
func checkSkillSizes(s Skill) error {
	if len(s.Document) > MaxSkillDocumentBytes {
		return fmt.Errorf("%s is %d bytes; the limit is %d (256 KiB): %w", SkillDocument, len(s.Document), MaxSkillDocumentBytes, ErrSkillQuota)
	}
	if len(s.Files) > MaxSkillFiles {
		return fmt.Errorf("the skill has %d files; the limit is %d: %w", len(s.Files), MaxSkillFiles, ErrSkillQuota)
	}
	var total int64
	for _, f := range s.Files {
		if len(f.Data) > MaxSkillFileBytes {
			return fmt.Errorf("file %q is %d bytes; the limit is %d (1 MiB): %w", f.Path, len(f.Data), MaxSkillFileBytes, ErrSkillQuota)
		}
		total += int64(len(f.Data))
	}
	if total > MaxSkillTotalBytes {
		return fmt.Errorf("the skill's files are %d bytes together; the limit is %d (8 MiB): %w", total, MaxSkillTotalBytes, ErrSkillQuota)
	}
	return nil
}

// CheckSkillCount reports, wrapping ErrSkillQuota, an organisation
// holding n skills that may not add one.
func CheckSkillCount(n int64) error {
	if n >= MaxSkillsPerOrg {
		return fmt.Errorf("the organisation holds %d skills; the limit is %d: %w", n, MaxSkillsPerOrg, ErrSkillQuota)
	}
	return nil
}

// CheckSkillAgent validates an agent's name as an attachment keys it:
// not empty, a ValidBlobKey within MaxSkillAgentBytes. Errors wrap
// ErrSkillInvalid.
func CheckSkillAgent(agent string) error {
	if agent == "" || len(agent) > MaxSkillAgentBytes || !ValidBlobKey(agent) {
		return fmt.Errorf("%w: the agent's name is empty, over %d bytes or not a key", ErrSkillInvalid, MaxSkillAgentBytes)
	}
	return nil
}
