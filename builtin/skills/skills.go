// Package skills provides load_skill: the tool that loads one of the
// skills attached to the turn's agent (store.Skills, in the Agent Skills
// folder format) — its SKILL.md and the list of its files, or one file
// by path — in bounded pages. It is declared when the agent allows it
// and has a skill attached; the system prompt then lists the skills
// (prompt.SkillsFragment).
package skills

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Name is the tool's name (prompt.SkillsTool).
const Name = "load_skill"

// MaxPageBytes bounds the text one call returns: 16 KiB, cut at a
// character boundary.
const MaxPageBytes = 16 << 10

// MaxListBytes bounds the list of a skill's files that the first page
// of SKILL.md ends with: the files past it are counted, not listed.
const MaxListBytes = 8 << 10

//go:embed load_skill.md
var description string

// Store reads the organisation's skills (store.Skills).
type Store interface {
	AgentSkills(ctx context.Context, orgID, agent string) ([]store.Skill, error)
	GetSkill(ctx context.Context, orgID, name string) (store.Skill, error)
	ReadSkillFile(ctx context.Context, orgID, name, path string) (store.SkillFile, error)
}

// Input is the tool's arguments.
type Input struct {
	Name   string `json:"name" jsonschema:"the skill's name, as the list of skills gives it"`
	Path   string `json:"path,omitempty" jsonschema:"a file of the skill, as load_skill listed it; leave out to load SKILL.md"`
	Offset int    `json:"offset,omitempty" jsonschema:"where to continue, as the last page said; 0 or left out for the start"`
}

// Tool returns load_skill over s. The organisation and agent come from
// the turn's scope alone: a skill not attached to that agent is refused
// as an unknown one is, with one message that names no other skill. A
// nil s keeps the declaration; its calls fail with an infrastructure
// error wrapping store.ErrNoStore.
func Tool(s Store) *tool.Tool {
	return tool.New(tool.Spec{
		Name:        Name,
		Family:      "skills",
		Macros:      []string{"skills_tool"},
		Description: strings.TrimSpace(description),
		Access:      tool.Read,
		Requires:    Requires,
		Limits:      []tool.Limit{{Name: "page_bytes", Value: MaxPageBytes}, {Name: "file_list_bytes", Value: MaxListBytes}},
		// The tool pages its own output.
		Unstored: true,
		Tune: func(sc *jsonschema.Schema) {
			lo, n, p := 0.0, store.MaxSkillNameBytes, store.MaxSkillPathBytes
			sc.Properties["offset"].Minimum = &lo
			sc.Properties["name"].MaxLength = &n
			sc.Properties["path"].MaxLength = &p
		},
	}, func(ctx context.Context, sc tool.Scope, in Input) (string, error) {
		return load(ctx, s, sc, in)
	})
}

// Requires is load_skill's condition: the agent has a skill attached.
func Requires(s turn.Selection) string {
	if len(s.Skills) == 0 {
		return "the agent has no skills attached"
	}
	return ""
}

// errUnavailable is the one refusal of a name that is unknown or not
// attached: it says nothing of which skills exist.
func errUnavailable(name string) error {
	return fmt.Errorf("no skill named %q is attached to you; use a name from the list of skills in your instructions", name)
}

func load(ctx context.Context, s Store, sc tool.Scope, in Input) (string, error) {
	name := strings.TrimSpace(in.Name)
	switch {
	case name == "":
		return "", errors.New("name is empty: give the name of one skill from your list")
	case in.Offset < 0:
		return "", fmt.Errorf("offset must be 0 or more, got %d", in.Offset)
	case s == nil:
		return "", tool.Infra(fmt.Errorf("load_skill: %w", store.ErrNoStore))
	}
	attached, err := s.AgentSkills(ctx, sc.OrgID, sc.Agent)
	if err != nil {
		return "", tool.Infra(fmt.Errorf("load_skill: %w", err))
	}
	if sc.Agent == "" || !slices.ContainsFunc(attached, func(k store.Skill) bool { return k.Name == name }) {
		return "", errUnavailable(name)
	}
	if in.Path == "" {
		return document(ctx, s, sc.OrgID, name, in.Offset)
	}
	return file(ctx, s, sc.OrgID, name, in.Path, in.Offset)
}

// document returns a page of the skill's SKILL.md and, on the first
// page, the list of its files.
func document(ctx context.Context, s Store, orgID, name string, offset int) (string, error) {
	sk, err := s.GetSkill(ctx, orgID, name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", errUnavailable(name) // deleted since the turn began
	case err != nil:
		return "", tool.Infra(fmt.Errorf("load_skill: %w", err))
	}
	text, head, err := page(sk.Document, offset, "skill "+name+", "+store.SkillDocument)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(head + "\n\n" + text)
	if offset == 0 {
		b.WriteString("\n\n")
		writeFiles(&b, name, sk.Files)
	}
	return b.String(), nil
}

// writeFiles lists a skill's files with their sizes.
func writeFiles(b *strings.Builder, name string, files []store.SkillFile) {
	if len(files) == 0 {
		fmt.Fprintf(b, "Skill %s has no other files.", name)
		return
	}
	fmt.Fprintf(b, "Files of skill %s (read one with load_skill name=%q path=<path>):", name, name)
	listed := 0
	for i, f := range files {
		line := fmt.Sprintf("\n- %s (%d bytes)", f.Path, f.Size)
		if listed+len(line) > MaxListBytes {
			fmt.Fprintf(b, "\n(%d more files not listed; read the ones SKILL.md names by their path.)", len(files)-i)
			return
		}
		b.WriteString(line)
		listed += len(line)
	}
}

// file returns a page of one of the skill's text files.
func file(ctx context.Context, s Store, orgID, name, path string, offset int) (string, error) {
	f, err := s.ReadSkillFile(ctx, orgID, name, path)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("skill %s has no file %q; load the skill with only its name to list its files", name, path)
	case err != nil:
		return "", tool.Infra(fmt.Errorf("load_skill: %w", err))
	}
	if !isText(f.Data) {
		return "", fmt.Errorf("file %q of skill %s is binary (%d bytes); load_skill reads text files only", path, name, len(f.Data))
	}
	text, head, err := page(string(f.Data), offset, "skill "+name+", file "+path)
	if err != nil {
		return "", err
	}
	return head + "\n\n" + text, nil
}

// isText reports whether data reads as text: valid UTF-8 without NUL.
func isText(data []byte) bool {
	return utf8.Valid(data) && !slices.Contains(data, 0)
}

// page cuts at most MaxPageBytes of text from offset (moved forward to a
// character boundary), never inside a character, and returns it with a
// header saying what it is and where the next page starts.
func page(text string, offset int, what string) (string, string, error) {
	if offset > len(text) {
		return "", "", fmt.Errorf("offset %d is past the end of %s (%d bytes)", offset, what, len(text))
	}
	for offset < len(text) && !utf8.RuneStart(text[offset]) {
		offset++
	}
	end := min(offset+MaxPageBytes, len(text))
	for end < len(text) && end > offset && !utf8.RuneStart(text[end]) {
		end--
	}
	head := fmt.Sprintf("%s: bytes %d-%d of %d.", what, offset, end, len(text))
	if end < len(text) {
		head += fmt.Sprintf(" More follows: call again with offset %d.", end)
	}
	return text[offset:end], head, nil
}
