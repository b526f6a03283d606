package skill_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/skill"
	"github.com/quiverhq/quiver/store"
)

func TestParseDocument(t *testing.T) {
	doc := "---\nname: csv-clean\ndescription: Clean CSV files.\nlicense: MIT\ncompatibility: Needs Python\n" +
		"allowed-tools: Read, Write\nmetadata:\n  owner: data-team\n  revision: 3\nextra: ignored\n---\n# Steps\n"
	m, body, err := skill.ParseDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := skill.Meta{Name: "csv-clean", Description: "Clean CSV files.", License: "MIT", Compatibility: "Needs Python",
		AllowedTools: []string{"Read", "Write"}, Metadata: map[string]string{"owner": "data-team", "revision": "3"}}
	if d := cmp.Diff(want, m); d != "" {
		t.Errorf("meta (-want +got):\n%s", d)
	}
	if body != "# Steps\n" {
		t.Errorf("body %q", body)
	}
	if _, body, err := skill.ParseDocument([]byte("---\nname: a\ndescription: b\n---")); err != nil || body != "" {
		t.Errorf("front matter at the end: %q, %v", body, err)
	}
}

// TestLongDescriptionCut: a description over the limit (published
// skills have them) is cut to it, with a warning, and the document kept.
func TestLongDescriptionCut(t *testing.T) {
	long := strings.Repeat("word ", 300) // 1,500 characters
	m, _, err := skill.ParseDocument([]byte("---\nname: a\ndescription: " + long + "\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(m.Description)); n > store.MaxSkillDescriptionRunes || n < store.MaxSkillDescriptionRunes*4/5 || !strings.HasSuffix(m.Description, "word…") {
		t.Errorf("description cut to %d characters: ...%q", n, m.Description[len(m.Description)-20:])
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "1499 characters") {
		t.Errorf("warnings %q", m.Warnings)
	}
	if m, _, _ := skill.ParseDocument([]byte("---\nname: a\ndescription: " + strings.Repeat("d", store.MaxSkillDescriptionRunes) + "\n---\n")); len(m.Warnings) != 0 || len(m.Description) != store.MaxSkillDescriptionRunes {
		t.Errorf("a description at the limit was changed: %d, %q", len(m.Description), m.Warnings)
	}
}

func TestParseDocumentRefuses(t *testing.T) {
	long := strings.Repeat("a", store.MaxSkillNameBytes+1)
	tests := []struct {
		name, doc, says string
		target          error
	}{
		{"NoFrontMatter", "# Just markdown\n", "no front matter", store.ErrSkillInvalid},
		{"NotAtTheStart", "\n---\nname: a\ndescription: b\n---\n", "no front matter", store.ErrSkillInvalid},
		{"NeverEnds", "---\nname: a\ndescription: b\n", "never ends", store.ErrSkillInvalid},
		{"Empty", "---\n---\nbody", "empty", store.ErrSkillInvalid},
		{"MissingName", "---\ndescription: b\n---\n", "no name", store.ErrSkillInvalid},
		{"MissingDescription", "---\nname: a\n---\n", "no description", store.ErrSkillInvalid},
		{"Uppercase", "---\nname: PDF\ndescription: b\n---\n", "other than a-z", store.ErrSkillInvalid},
		{"Underscore", "---\nname: my_skill\ndescription: b\n---\n", "other than a-z", store.ErrSkillInvalid},
		{"Space", "---\nname: my skill\ndescription: b\n---\n", "other than a-z", store.ErrSkillInvalid},
		{"LeadingHyphen", "---\nname: -pdf\ndescription: b\n---\n", "begins or ends", store.ErrSkillInvalid},
		{"DoubleHyphen", "---\nname: a--b\ndescription: b\n---\n", "two '-'", store.ErrSkillInvalid},
		{"NameTooLong", "---\nname: " + long + "\ndescription: b\n---\n", "the limit is 64", store.ErrSkillInvalid},
		{"DescriptionControl", "---\nname: a\ndescription: \"a\\u0007b\"\n---\n", "not UTF-8 text", store.ErrSkillInvalid},
		{"NotYAML", "---\nname: [a\ndescription: b\n---\n", "not YAML", store.ErrSkillInvalid},
		{"NotAMapping", "---\n- a\n- b\n---\n", "not YAML", store.ErrSkillInvalid},
		{"NameAList", "---\nname: [a]\ndescription: b\n---\n", "not YAML", store.ErrSkillInvalid},
		{"DuplicateKey", "---\nname: a\nname: b\ndescription: c\n---\n", "not YAML", store.ErrSkillInvalid},
		{"MetadataList", "---\nname: a\ndescription: b\nmetadata: [x]\n---\n", "metadata is not a map", store.ErrSkillInvalid},
		{"MetadataNested", "---\nname: a\ndescription: b\nmetadata:\n  x:\n    y: z\n---\n", "text to text", store.ErrSkillInvalid},
		{"ToolsAMap", "---\nname: a\ndescription: b\nallowed-tools:\n  x: y\n---\n", "allowed-tools", store.ErrSkillInvalid},
		{"CompatibilityTooLong", "---\nname: a\ndescription: b\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n", "limit is 500", store.ErrSkillInvalid},
		{"NotUTF8", "---\nname: a\ndescription: \xff\n---\n", "not UTF-8", store.ErrSkillInvalid},
		{"TooLarge", "---\nname: a\ndescription: b\n---\n" + strings.Repeat("x", store.MaxSkillDocumentBytes), "256 KiB", store.ErrSkillQuota},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := skill.ParseDocument([]byte(tc.doc))
			if !errors.Is(err, tc.target) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("ParseDocument = %v; want %v saying %q", err, tc.target, tc.says)
			}
		})
	}
}

// TestReadDirPublicShapes reads folders shaped as published skills are:
// optional fields, keys of other tools, a folded description, CRLF line
// ends, a byte order mark, binary files in subfolders.
func TestReadDirPublicShapes(t *testing.T) {
	tests := []struct {
		dir   string
		meta  skill.Meta
		files []string
	}{
		{"pdf-forms", skill.Meta{Name: "pdf-forms", Description: "Fill in and flatten PDF forms. Use when the user gives a PDF with form fields and asks to complete it.",
			License: "Complete terms in LICENSE.txt", AllowedTools: []string{"Read", "Write", "Bash"},
			Metadata: map[string]string{"author": "quiver-tests", "version": "1.0"}},
			[]string{"LICENSE.txt", "reference/fields.md", "scripts/fill.py"}},
		{"release-notes", skill.Meta{Name: "release-notes", Description: "Write release notes from a list of merged changes: group them, lead with what users notice.",
			AllowedTools: []string{"Read", "Grep", "Glob"}}, nil},
		{"brand-voice", skill.Meta{Name: "brand-voice", Description: "Apply the house style: short sentences, no jargon.", Compatibility: "Any model"},
			[]string{"assets/palette.bin"}},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", "folders", tc.dir)
			b, err := skill.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.meta, b.Meta); d != "" {
				t.Errorf("meta (-want +got):\n%s", d)
			}
			var paths []string
			for _, f := range b.Files {
				paths = append(paths, f.Path)
				data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
				if err != nil || !bytes.Equal(data, f.Data) || f.Size != int64(len(data)) {
					t.Errorf("file %s read differently: %v", f.Path, err)
				}
			}
			if d := cmp.Diff(tc.files, paths); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			doc, _ := os.ReadFile(filepath.Join(dir, "SKILL.md"))
			if b.Document != string(doc) {
				t.Error("the document is not SKILL.md as written")
			}
			if _, err := store.CheckSkill(b.Record("org", at)); err != nil {
				t.Errorf("the store refuses the bundle: %v", err)
			}
		})
	}
}

// writeSkill writes a skill folder named name under a temporary folder,
// with SKILL.md naming nameInDoc and files (path → content).
func writeSkill(t *testing.T, name, nameInDoc string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	files["SKILL.md"] = "---\nname: " + nameInDoc + "\ndescription: A test skill.\n---\nBody.\n"
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadDirSkipsLitter(t *testing.T) {
	dir := writeSkill(t, "tidy", "tidy", map[string]string{".DS_Store": "x", ".git/HEAD": "ref", "docs/a.md": "a", "__MACOSX/docs/._a.md": "junk"})
	b, err := skill.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Files) != 1 || b.Files[0].Path != "docs/a.md" {
		t.Errorf("files %+v", b.Files)
	}
}

func TestReadDirRefuses(t *testing.T) {
	big := strings.Repeat("x", store.MaxSkillFileBytes+1)
	many := map[string]string{}
	for i := range store.MaxSkillFiles + 1 {
		many[filepath.Join("f", strings.Repeat("a", i+1))] = "x"
	}
	total := map[string]string{}
	for _, p := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
		total[p] = big[:store.MaxSkillFileBytes]
	}
	tests := []struct {
		name, folder, inDoc string
		files               map[string]string
		says                string
		target              error
	}{
		{"NameMismatch", "pdf-tools", "pdf", map[string]string{}, `"pdf" does not match its folder "pdf-tools"`, store.ErrSkillInvalid},
		{"FileTooLarge", "big", "big", map[string]string{"big.bin": big}, "1 MiB", store.ErrSkillQuota},
		{"TooManyFiles", "many", "many", many, "over 100 files", store.ErrSkillQuota},
		{"TotalTooLarge", "total", "total", total, "8 MiB", store.ErrSkillQuota},
		{"ReservedName", "res", "res", map[string]string{"nul.txt": "x"}, "reserved", store.ErrSkillInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := skill.ReadDir(writeSkill(t, tc.folder, tc.inDoc, tc.files))
			if !errors.Is(err, tc.target) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("ReadDir = %v; want %v saying %q", err, tc.target, tc.says)
			}
		})
	}
	t.Run("Symlink", func(t *testing.T) {
		dir := writeSkill(t, "link", "link", map[string]string{})
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
			t.Skip(err)
		}
		if _, err := skill.ReadDir(dir); !errors.Is(err, store.ErrSkillInvalid) || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("ReadDir = %v; want a refused symbolic link", err)
		}
	})
	t.Run("NoSkillMD", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := skill.ReadDir(dir); !errors.Is(err, store.ErrSkillInvalid) || !strings.Contains(err.Error(), "no SKILL.md") {
			t.Errorf("ReadDir = %v", err)
		}
	})
}

// zipOf returns a zip holding files (name → content) in order.
func zipOf(t testing.TB, files ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range files {
		fw, err := w.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const zipDoc = "---\nname: notes\ndescription: Take notes.\n---\nBody\n"

func TestReadZip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files [][2]string
	}{
		{"AtRoot", [][2]string{{"SKILL.md", zipDoc}, {"docs/a.md", "a"}, {"__MACOSX/._SKILL.md", "junk"}}},
		{"InItsFolder", [][2]string{{"notes/", ""}, {"notes/SKILL.md", zipDoc}, {"notes/docs/a.md", "a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := zipOf(t, tc.files...)
			b, err := skill.ReadZip(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			if b.Meta.Name != "notes" || b.Document != zipDoc || len(b.Files) != 1 || b.Files[0].Path != "docs/a.md" || string(b.Files[0].Data) != "a" {
				t.Errorf("bundle %+v", b)
			}
		})
	}
}

func TestReadZipRefuses(t *testing.T) {
	tests := []struct {
		name   string
		files  [][2]string
		says   string
		target error
	}{
		{"Traversal", [][2]string{{"SKILL.md", zipDoc}, {"../evil.sh", "x"}}, "leaves the folder", store.ErrSkillInvalid},
		{"TraversalFirst", [][2]string{{"../evil.sh", "x"}, {"SKILL.md", zipDoc}}, "not a path inside", store.ErrSkillInvalid},
		{"Absolute", [][2]string{{"/etc/cron.d/x", "x"}, {"SKILL.md", zipDoc}}, "not a path inside", store.ErrSkillInvalid},
		{"Backslash", [][2]string{{"SKILL.md", zipDoc}, {`docs\a.md`, "x"}}, `'\'`, store.ErrSkillInvalid},
		{"WrongFolder", [][2]string{{"other/SKILL.md", zipDoc}}, `does not match its folder "other"`, store.ErrSkillInvalid},
		{"TwoFolders", [][2]string{{"a/SKILL.md", zipDoc}, {"b/x", "x"}}, "no SKILL.md", store.ErrSkillInvalid},
		{"FileTooLarge", [][2]string{{"SKILL.md", zipDoc}, {"big", strings.Repeat("0", store.MaxSkillFileBytes+1)}}, "1 MiB", store.ErrSkillQuota},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := zipOf(t, tc.files...)
			_, err := skill.ReadZip(bytes.NewReader(data), int64(len(data)))
			if !errors.Is(err, tc.target) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("ReadZip = %v; want %v saying %q", err, tc.target, tc.says)
			}
		})
	}
	t.Run("NotAZip", func(t *testing.T) {
		if _, err := skill.ReadZip(strings.NewReader("plain text"), 10); !errors.Is(err, store.ErrSkillInvalid) {
			t.Errorf("ReadZip = %v", err)
		}
	})
	t.Run("ZipTooLarge", func(t *testing.T) {
		if _, err := skill.ReadZip(strings.NewReader(""), skill.MaxZipBytes+1); !errors.Is(err, store.ErrSkillQuota) {
			t.Errorf("ReadZip = %v", err)
		}
	})
}
