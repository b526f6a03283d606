package intent

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

//go:embed packs/*.yaml
var builtinPacks embed.FS

// Pack is one language's keyword pack, as written in its YAML file:
//
//	lang: vi
//	triggers:            # target → phrases that open it
//	  reminder: [nhắc tôi, đặt lời nhắc]
//	combos:              # a verb and a noun in one sentence open the target
//	  - target: image
//	    verbs: [vẽ, tạo]
//	    nouns: [hình, ảnh]
//	ignore: [quên mật khẩu]   # phrases inside which no trigger counts
//	followups: [làm lại]      # re-open the most recent request's targets
//
// Every phrase is normalised as messages are (see [Normalise]). A phrase
// ending in '*' matches any word it starts. Phrases may not contain regular
// expression syntax, and a phrase in Han, kana or Hangul needs at least two
// characters.
type Pack struct {
	Lang      string              `yaml:"lang"`
	Triggers  map[string][]string `yaml:"triggers"`
	Combos    []Combo             `yaml:"combos"`
	Ignore    []string            `yaml:"ignore"`
	Followups []string            `yaml:"followups"`
}

// Combo opens Target when one of Verbs and one of Nouns occur in the same
// sentence, in either order: "draw me a picture", "a video of it, make it".
type Combo struct {
	Target string   `yaml:"target"`
	Verbs  []string `yaml:"verbs"`
	Nouns  []string `yaml:"nouns"`
}

// PackError is an invalid pack entry; it names the file and line.
type PackError struct {
	File string
	Line int
	Msg  string
}

// Error is "file:line: message", the form editors jump to.
func (e *PackError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// regexChars are characters a phrase may not hold: packs are literal.
const regexChars = `\^$.|?+()[]{}`

// checkPhrase validates one phrase; custom says whether "^" (every turn)
// is allowed.
func checkPhrase(raw string, custom bool) error {
	p := Normalise(raw)
	switch {
	case p == "":
		return errors.New("empty phrase")
	case custom && p == "^":
		return nil
	case strings.ContainsAny(p, regexChars):
		return fmt.Errorf("phrase %q holds regular expression syntax (one of %s); phrases are literal", raw, regexChars)
	case strings.Contains(strings.TrimSuffix(p, "*"), "*"):
		return fmt.Errorf("phrase %q: '*' is allowed only at the end", raw)
	case strings.HasSuffix(p, "*") && utf8.RuneCountInString(p) < 3:
		return fmt.Errorf("phrase %q: a prefix needs at least two characters before '*'", raw)
	case utf8.RuneCountInString(p) < 2 && isCJK(p):
		return fmt.Errorf("phrase %q: a Han, kana or Hangul phrase needs at least two characters", raw)
	}
	return nil
}

// isCJK reports whether s has a Han, kana or Hangul rune.
func isCJK(s string) bool {
	for _, r := range s {
		if unspaced(r) {
			return true
		}
	}
	return false
}

// parsePack decodes and validates a pack file. Errors are *PackError.
func parsePack(name string, data []byte) (Pack, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		return Pack{}, &PackError{File: name, Line: yamlLine(err), Msg: firstLine(err.Error())}
	}
	var p Pack
	kdec := yaml.NewDecoder(bytes.NewReader(data))
	kdec.KnownFields(true)
	if err := kdec.Decode(&p); err != nil {
		return Pack{}, &PackError{File: name, Line: yamlLine(err), Msg: yamlMessage(err)}
	}
	if err := validatePack(name, &root, p); err != nil {
		return Pack{}, err
	}
	return p, nil
}

// validatePack checks every phrase, reporting the line it is on.
func validatePack(name string, root *yaml.Node, p Pack) error {
	if p.Lang == "" {
		return &PackError{File: name, Line: 1, Msg: "lang is required"}
	}
	var err error
	walkScalars(root, nil, func(keys []string, n *yaml.Node) {
		if err != nil || len(keys) == 0 || keys[0] == "lang" {
			return
		}
		if keys[0] == "triggers" && len(keys) >= 2 && !validTarget(keys[1]) {
			err = &PackError{File: name, Line: n.Line, Msg: fmt.Sprintf("unknown target %q (targets: %s)", keys[1], strings.Join(Targets, ", "))}
			return
		}
		if keys[0] == "combos" && len(keys) >= 2 && keys[len(keys)-1] == "target" {
			if !validTarget(n.Value) {
				err = &PackError{File: name, Line: n.Line, Msg: fmt.Sprintf("unknown target %q", n.Value)}
			}
			return
		}
		if e := checkPhrase(n.Value, false); e != nil {
			err = &PackError{File: name, Line: n.Line, Msg: e.Error()}
		}
	})
	if err != nil {
		return err
	}
	for i, c := range p.Combos {
		if len(c.Verbs) == 0 || len(c.Nouns) == 0 {
			return &PackError{File: name, Line: comboLine(root, i), Msg: "a combo needs verbs and nouns"}
		}
	}
	return nil
}

// walkScalars calls fn for every scalar value under n with the mapping
// keys on its path (sequence positions are skipped).
func walkScalars(n *yaml.Node, keys []string, fn func([]string, *yaml.Node)) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			walkScalars(c, keys, fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			walkScalars(n.Content[i+1], append(append([]string(nil), keys...), n.Content[i].Value), fn)
		}
	case yaml.ScalarNode:
		fn(keys, n)
	}
}

// comboLine returns the line of the i-th combo, for errors.
func comboLine(root *yaml.Node, i int) int {
	if len(root.Content) == 0 {
		return 1
	}
	m := root.Content[0]
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == "combos" && i < len(m.Content[k+1].Content) {
			return m.Content[k+1].Content[i].Line
		}
	}
	return 1
}

// yamlLine extracts "line N" from a yaml error, or 1.
func yamlLine(err error) int {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	var n int
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i+5:], "%d", &n)
	}
	return max(n, 1)
}

// yamlMessage returns the first problem of a decoding error without its
// "line N:" prefix (the PackError carries the line). A *yaml.TypeError's
// first line is only "yaml: unmarshal errors:"; the problems follow it.
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := strings.TrimSpace(te.Errors[0])
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if _, after, found := strings.Cut(rest, ": "); found {
				msg = after
			}
		}
		return msg
	}
	return firstLine(err.Error())
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// BuiltinPacks loads and validates the packs shipped with Quiver.
func BuiltinPacks() ([]Pack, error) {
	return LoadPacks(builtinPacks, "packs")
}

// DirError is a folder of extra packs that does not load: Err is why (a
// *PackError names the file and line of an invalid entry).
type DirError struct {
	Dir string
	Err error
}

// Error names the folder and why it does not load.
func (e *DirError) Error() string { return fmt.Sprintf("packs %s: %v", e.Dir, e.Err) }

// Unwrap returns Err.
func (e *DirError) Unwrap() error { return e.Err }

// LoadDetector is the detector of the built-in packs followed by those
// in dir ("" for none), every entry validated: a folder that does not
// load is a *DirError, and nothing should start with it.
func LoadDetector(dir string) (*Detector, error) {
	packs, err := BuiltinPacks()
	if err != nil {
		return nil, fmt.Errorf("intent packs: %w", err)
	}
	if dir != "" {
		more, err := LoadPacks(os.DirFS(dir), ".")
		if err != nil {
			return nil, &DirError{Dir: dir, Err: err}
		}
		packs = append(packs, more...)
	}
	return New(packs), nil
}

// LoadPacks loads every *.yaml file in dir of fsys, sorted by name.
func LoadPacks(fsys fs.FS, dir string) ([]Pack, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var packs []Pack
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		p, err := parsePack(n, data)
		if err != nil {
			return nil, err
		}
		packs = append(packs, p)
	}
	return packs, nil
}
