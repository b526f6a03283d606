// Package skill reads skills in the Agent Skills folder format, the one
// agent tools share: a folder holding SKILL.md (YAML front matter with
// name and description, then Markdown instructions) and any other files
// the instructions refer to. It parses SKILL.md's front matter
// (ParseDocument) and reads a folder (ReadDir) or a .zip of one
// (ReadZip) into a Bundle that store.Skills keeps, each bound of the
// store checked while reading, so nothing is read past a cap.
//
// Errors wrap store.ErrSkillInvalid (the input breaks the format) or
// store.ErrSkillQuota (it is too large), so every caller maps them the
// same way.
package skill

import (
	"time"

	"github.com/quiverhq/quiver/store"
)

// Meta is what SKILL.md's front matter says.
type Meta struct {
	// Name and Description are required; Name follows
	// store.CheckSkillName.
	Name        string
	Description string
	// License, Compatibility and AllowedTools are optional and kept for
	// people reading the skill; AllowedTools is the format's
	// "allowed-tools" (space-separated, or a YAML list), never a grant:
	// an agent's tools come from its allowlist.
	License       string
	Compatibility string
	AllowedTools  []string
	// Metadata is the optional "metadata" map, its values as text.
	Metadata map[string]string
	// Warnings are what was read differently from how it was written,
	// for the person importing (a description cut to the store's
	// limit); nil when there is nothing to say.
	Warnings []string
}

// Bundle is one skill as read from a folder or a zip.
type Bundle struct {
	Meta Meta
	// Document is SKILL.md's text, front matter included.
	Document string
	// Files are the folder's other files, sorted by path.
	Files []store.SkillFile
}

// Record returns b as the organisation's store.Skill, stamped at.
func (b Bundle) Record(orgID string, at time.Time) store.Skill {
	return store.Skill{OrgID: orgID, Name: b.Meta.Name, Description: b.Meta.Description, Document: b.Document,
		Files: b.Files, UpdatedAt: at}
}
