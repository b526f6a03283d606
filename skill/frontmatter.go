package skill

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/quiverhq/quiver/store"
)

// Bounds of the front matter, beyond store's.
const (
	// MaxFrontMatterBytes bounds the YAML between the "---" lines.
	MaxFrontMatterBytes = 64 << 10
	// MaxCompatibilityRunes bounds "compatibility", as the format does.
	MaxCompatibilityRunes = 500
	// MaxMetadataEntries bounds the "metadata" map.
	MaxMetadataEntries = 100
)

// frontMatter is the YAML of SKILL.md. Keys it does not name (other
// agent tools add their own, such as "version" or "model") are ignored,
// so that existing skills import as they are.
type frontMatter struct {
	Name          string    `yaml:"name"`
	Description   string    `yaml:"description"`
	License       string    `yaml:"license"`
	Compatibility string    `yaml:"compatibility"`
	AllowedTools  yaml.Node `yaml:"allowed-tools"`
	Metadata      yaml.Node `yaml:"metadata"`
}

// invalid returns an error wrapping store.ErrSkillInvalid.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", store.ErrSkillInvalid, fmt.Sprintf(format, args...))
}

// ParseDocument parses SKILL.md's text: it must begin with a line "---"
// (after an optional UTF-8 byte order mark; CRLF line ends are read as
// LF), hold YAML up to the next line "---", and name the skill and
// describe it. It returns the front matter and the Markdown after it.
// A description over store.MaxSkillDescriptionRunes is cut to it (some
// published skills have one), with a warning in Meta.Warnings. A
// document over store.MaxSkillDocumentBytes, without front matter,
// with YAML that does not parse or is not a mapping, a missing or bad
// name (store.CheckSkillName) or description
// (store.CheckSkillDescription), a compatibility over
// MaxCompatibilityRunes, allowed-tools that is neither text nor a list
// of text, or metadata that is not a map of text gives one error
// wrapping store.ErrSkillInvalid (store.ErrSkillQuota for the size).
func ParseDocument(doc []byte) (Meta, string, error) {
	if len(doc) > store.MaxSkillDocumentBytes {
		return Meta{}, "", fmt.Errorf("%s is %d bytes; the limit is %d (256 KiB): %w", store.SkillDocument, len(doc), store.MaxSkillDocumentBytes, store.ErrSkillQuota)
	}
	if !utf8.Valid(doc) || bytes.IndexByte(doc, 0) >= 0 {
		return Meta{}, "", invalid("%s is not UTF-8 text", store.SkillDocument)
	}
	text := strings.ReplaceAll(strings.TrimPrefix(string(doc), "\uFEFF"), "\r\n", "\n")
	head, body, err := splitFrontMatter(text)
	if err != nil {
		return Meta{}, "", err
	}
	var fm frontMatter
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		return Meta{}, "", invalid("%s's front matter is not YAML the format reads: %s", store.SkillDocument, oneLine(err.Error()))
	}
	m, err := fm.meta()
	if err != nil {
		return Meta{}, "", err
	}
	return m, body, nil
}

// splitFrontMatter returns the YAML between the first two "---" lines of
// text (LF line ends) and what follows the second.
func splitFrontMatter(text string) (string, string, error) {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return "", "", invalid("%s has no front matter: it must begin with a line \"---\", then name and description, then \"---\"", store.SkillDocument)
	}
	var head, body string
	switch {
	case strings.HasPrefix(rest, "---\n") || rest == "---":
		head, body = "", strings.TrimPrefix(strings.TrimPrefix(rest, "---"), "\n")
	default:
		i := strings.Index(rest, "\n---\n")
		switch {
		case i >= 0:
			head, body = rest[:i+1], rest[i+len("\n---\n"):]
		case strings.HasSuffix(rest, "\n---"):
			head, body = rest[:len(rest)-len("---")], ""
		default:
			return "", "", invalid("%s's front matter never ends: no line \"---\" after it", store.SkillDocument)
		}
	}
	if len(head) > MaxFrontMatterBytes {
		return "", "", invalid("%s's front matter is %d bytes; the limit is %d", store.SkillDocument, len(head), MaxFrontMatterBytes)
	}
	if strings.TrimSpace(head) == "" {
		return "", "", invalid("%s's front matter is empty: it needs name and description", store.SkillDocument)
	}
	return head, body, nil
}

// meta checks fm and returns it as Meta.
func (fm frontMatter) meta() (Meta, error) {
	m := Meta{Name: strings.TrimSpace(fm.Name), Description: strings.TrimSpace(fm.Description),
		License: strings.TrimSpace(fm.License), Compatibility: strings.TrimSpace(fm.Compatibility)}
	if m.Name == "" {
		return Meta{}, invalid("%s's front matter has no name", store.SkillDocument)
	}
	if err := store.CheckSkillName(m.Name); err != nil {
		return Meta{}, err
	}
	if m.Description == "" {
		return Meta{}, invalid("%s's front matter has no description", store.SkillDocument)
	}
	if n := utf8.RuneCountInString(m.Description); n > store.MaxSkillDescriptionRunes {
		// Published skills exist with longer descriptions than the format
		// allows; they import, with the description the prompt lists cut
		// (SKILL.md itself is kept as written).
		m.Description = cutDescription(m.Description)
		m.Warnings = append(m.Warnings, fmt.Sprintf("the description is %d characters; the first %d are kept as the skill's description (SKILL.md is stored as written)",
			n, utf8.RuneCountInString(m.Description)))
	}
	if err := store.CheckSkillDescription(m.Description); err != nil {
		return Meta{}, err
	}
	if n := utf8.RuneCountInString(m.Compatibility); n > MaxCompatibilityRunes {
		return Meta{}, invalid("compatibility is %d characters; the limit is %d", n, MaxCompatibilityRunes)
	}
	var err error
	if m.AllowedTools, err = toolNames(&fm.AllowedTools); err != nil {
		return Meta{}, err
	}
	if m.Metadata, err = metadata(&fm.Metadata); err != nil {
		return Meta{}, err
	}
	return m, nil
}

// cutDescription cuts d to store.MaxSkillDescriptionRunes characters, at
// the last space in its final fifth when there is one, ending with an
// ellipsis.
func cutDescription(d string) string {
	r := []rune(d)[:store.MaxSkillDescriptionRunes-1]
	cut := len(r)
	for i := len(r) - 1; i > len(r)*4/5; i-- {
		if r[i] == ' ' || r[i] == '\n' {
			cut = i
			break
		}
	}
	return strings.TrimSpace(string(r[:cut])) + "…"
}

// toolNames reads allowed-tools: a text of names separated by spaces or
// commas, or a list of texts.
func toolNames(n *yaml.Node) ([]string, error) {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	}
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		return split(n.Value), nil
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, invalid("allowed-tools holds something other than tool names")
			}
			out = append(out, split(c.Value)...)
		}
		return out, nil
	}
	return nil, invalid("allowed-tools is neither text nor a list")
}

// metadata reads the metadata map, its values as text.
func metadata(n *yaml.Node) (map[string]string, error) {
	switch {
	case n.Kind == 0:
		return nil, nil
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return nil, nil
	case n.Kind != yaml.MappingNode:
		return nil, invalid("metadata is not a map")
	case len(n.Content)/2 > MaxMetadataEntries:
		return nil, invalid("metadata has %d entries; the limit is %d", len(n.Content)/2, MaxMetadataEntries)
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
			return nil, invalid("metadata is not a map of text to text")
		}
		out[k.Value] = v.Value
	}
	return out, nil
}

// oneLine joins s's lines with "; ".
func oneLine(s string) string {
	return strings.Join(slices.DeleteFunc(strings.Split(s, "\n"), func(l string) bool { return strings.TrimSpace(l) == "" }), "; ")
}

// errNotFolder reports a name mismatch between SKILL.md and its folder.
var errNotFolder = errors.New("does not match its folder")

// checkFolder refuses, wrapping store.ErrSkillInvalid, a name other than
// its folder's; folder "" is not checked.
func checkFolder(m Meta, folder string) error {
	if folder == "" || folder == m.Name {
		return nil
	}
	return fmt.Errorf("%w: the name %q %w %q", store.ErrSkillInvalid, m.Name, errNotFolder, folder)
}
