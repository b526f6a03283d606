package httpapi_test

import (
	"archive/zip"
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// skillZip is a multipart form holding a zip of files (name → content)
// as the field "file".
func skillZip(t *testing.T, files ...[2]string) (*bytes.Buffer, string) {
	t.Helper()
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	for _, f := range files {
		w, err := zw.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	zw.Close()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, err := w.CreateFormFile("file", "skill.zip")
	if err != nil {
		t.Fatal(err)
	}
	part.Write(z.Bytes())
	w.Close()
	return &b, w.FormDataContentType()
}

const apiSkillDoc = "---\nname: invoices\ndescription: Write invoices.\n---\nRead format.md.\n"

func skillsFixture(t *testing.T) *fixture {
	return newFixture(t, func(c *httpapi.Config) { c.Skills = c.Store.(store.Store) })
}

func TestSkillsUploadListAttachDelete(t *testing.T) {
	f := skillsFixture(t)
	body, ct := skillZip(t, [2]string{"invoices/SKILL.md", apiSkillDoc}, [2]string{"invoices/format.md", "# Format"})
	if r := f.do(f.bob, http.MethodPost, "/api/skills", body, "Content-Type: "+ct); r.StatusCode != http.StatusForbidden {
		t.Errorf("a member's upload: status %d", r.StatusCode)
	}
	body, ct = skillZip(t, [2]string{"invoices/SKILL.md", apiSkillDoc}, [2]string{"invoices/format.md", "# Format"})
	var added httpapi.Skill
	f.ok(f.do(f.alice, http.MethodPost, "/api/skills", body, "Content-Type: "+ct), http.StatusOK, &added)
	if added.Name != "invoices" || len(added.Files) != 1 || added.Files[0] != (httpapi.SkillFile{Path: "format.md", Size: 8}) {
		t.Errorf("added %+v", added)
	}
	var list struct{ Skills []httpapi.Skill }
	f.ok(f.do(f.bob, http.MethodGet, "/api/skills", nil), http.StatusOK, &list)
	if len(list.Skills) != 1 || list.Skills[0].Document != "" || list.Skills[0].Bytes != 8 || list.Skills[0].FileCount != 1 || list.Skills[0].Files != nil {
		t.Errorf("list %+v", list.Skills)
	}
	f.ok(f.do(f.dave, http.MethodGet, "/api/skills", nil), http.StatusOK, &list)
	if len(list.Skills) != 0 {
		t.Errorf("another organisation sees %+v", list.Skills)
	}
	var one httpapi.Skill
	f.ok(f.do(f.bob, http.MethodGet, "/api/skills/invoices", nil), http.StatusOK, &one)
	if one.Document != apiSkillDoc || len(one.Files) != 1 {
		t.Errorf("document %q", one.Document)
	}
	wantError(t, f.do(f.dave, http.MethodGet, "/api/skills/invoices", nil), http.StatusNotFound, "not_found")

	f.ok(f.do(f.alice, http.MethodPut, "/api/agents/helper/skills/invoices", nil), http.StatusNoContent, nil)
	f.ok(f.do(f.bob, http.MethodGet, "/api/agents/helper/skills", nil), http.StatusOK, &list)
	if len(list.Skills) != 1 || list.Skills[0].Name != "invoices" {
		t.Errorf("attached %+v", list.Skills)
	}
	wantError(t, f.do(f.alice, http.MethodPut, "/api/agents/nobody/skills/invoices", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.alice, http.MethodPut, "/api/agents/helper/skills/nope", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.dave, http.MethodPut, "/api/agents/helper/skills/invoices", nil), http.StatusNotFound, "not_found")
	if r := f.do(f.bob, http.MethodPut, "/api/agents/helper/skills/invoices", nil); r.StatusCode != http.StatusForbidden {
		t.Errorf("a member's attach: status %d", r.StatusCode)
	}
	f.ok(f.do(f.alice, http.MethodDelete, "/api/agents/helper/skills/invoices", nil), http.StatusNoContent, nil)
	wantError(t, f.do(f.alice, http.MethodDelete, "/api/agents/helper/skills/invoices", nil), http.StatusNotFound, "not_found")

	f.ok(f.do(f.alice, http.MethodPut, "/api/agents/helper/skills/invoices", nil), http.StatusNoContent, nil)
	f.ok(f.do(f.alice, http.MethodDelete, "/api/skills/invoices", nil), http.StatusNoContent, nil)
	f.ok(f.do(f.bob, http.MethodGet, "/api/agents/helper/skills", nil), http.StatusOK, &list)
	if len(list.Skills) != 0 {
		t.Errorf("a deleted skill stays attached: %+v", list.Skills)
	}
	wantError(t, f.do(f.alice, http.MethodDelete, "/api/skills/invoices", nil), http.StatusNotFound, "not_found")
}

func TestSkillUploadRefused(t *testing.T) {
	f := skillsFixture(t)
	for name, files := range map[string][][2]string{
		"does not match its folder": {{"bills/SKILL.md", apiSkillDoc}},
		"leaves the folder":         {{"SKILL.md", apiSkillDoc}, {"../evil", "x"}},
		"no front matter":           {{"SKILL.md", "# no front matter"}},
		"1 MiB":                     {{"SKILL.md", apiSkillDoc}, {"big.bin", strings.Repeat("0", store.MaxSkillFileBytes+1)}},
	} {
		body, ct := skillZip(t, files...)
		r := f.do(f.alice, http.MethodPost, "/api/skills", body, "Content-Type: "+ct)
		wantError(t, r, http.StatusUnprocessableEntity, "invalid_request")
		if !strings.Contains(string(r.body), name) {
			t.Errorf("refusal %s does not say %q", r.body, name)
		}
	}
	var list struct{ Skills []httpapi.Skill }
	f.ok(f.do(f.alice, http.MethodGet, "/api/skills", nil), http.StatusOK, &list)
	if len(list.Skills) != 0 {
		t.Errorf("a refused upload stored %+v", list.Skills)
	}
}

// TestSkillUploadLongDescription: a published skill whose description
// is over the limit is stored with it cut, and the answer says so.
func TestSkillUploadLongDescription(t *testing.T) {
	f := skillsFixture(t)
	doc := "---\nname: long\ndescription: " + strings.Repeat("word ", 300) + "\n---\nBody\n"
	body, ct := skillZip(t, [2]string{"SKILL.md", doc})
	var added httpapi.Skill
	f.ok(f.do(f.alice, http.MethodPost, "/api/skills", body, "Content-Type: "+ct), http.StatusOK, &added)
	if len([]rune(added.Description)) > store.MaxSkillDescriptionRunes || len(added.Warnings) != 1 || !strings.Contains(added.Warnings[0], "SKILL.md is stored as written") {
		t.Errorf("added %d characters, warnings %q", len([]rune(added.Description)), added.Warnings)
	}
}

func TestSkillsOff(t *testing.T) {
	f := newFixture(t, nil)
	wantError(t, f.do(f.alice, http.MethodGet, "/api/skills", nil), http.StatusNotImplemented, "not_configured")
}

// TestSkillUploadBodyCap: a skill upload may be larger than the server's
// body cap, up to the zip limit and the form around it; past that it is
// 413 and nothing is read as a skill.
func TestSkillUploadBodyCap(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) {
		c.Skills = c.Store.(store.Store)
		c.MaxBody = 1024
	})
	body, ct := skillZip(t, [2]string{"SKILL.md", "---\nname: big\ndescription: d\n---\n"}, [2]string{"data.txt", randomText(8 << 10)})
	if body.Len() <= 1024 {
		t.Fatalf("the upload is %d bytes, not over the server's cap", body.Len())
	}
	f.ok(f.do(f.alice, http.MethodPost, "/api/skills", body, "Content-Type: "+ct), http.StatusOK, nil)
	if r := f.do(f.alice, http.MethodPost, "/api/agents/helper/knowledge", strings.NewReader(strings.Repeat("x", 2048))); r.StatusCode == http.StatusOK {
		t.Errorf("a body over the server's cap elsewhere: status %d", r.StatusCode)
	}
}

// randomText is n bytes of text that does not compress.
func randomText(n int) string {
	var b strings.Builder
	x := uint32(2463534242)
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b.WriteByte(byte('a' + x%26))
	}
	return b.String()
}
