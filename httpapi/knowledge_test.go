package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/knowledge"
	"github.com/quiverhq/quiver/store"
)

// knowledgeAPI is httpapi.Knowledge over one store.
type knowledgeAPI struct {
	*knowledge.Index
	store.Knowledge
}

func multipartFiles(t *testing.T, files map[string][]byte) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, name := range []string{"good.md", "bad.bin", "more.txt"} {
		data, ok := files[name]
		if !ok {
			continue
		}
		part, err := w.CreateFormFile("files", name)
		if err != nil {
			t.Fatal(err)
		}
		part.Write(data)
	}
	w.Close()
	return &b, w.FormDataContentType()
}

func TestKnowledgeUploadListDelete(t *testing.T) {
	var st store.Store
	f := newFixture(t, func(c *httpapi.Config) {
		st = c.Store.(store.Store)
		c.Knowledge = knowledgeAPI{Index: &knowledge.Index{Store: st, Embedders: embed.Fixed{E: embed.Local{}}}, Knowledge: st}
	})
	body, ct := multipartFiles(t, map[string][]byte{
		"good.md":  []byte("# Leave\n\nEveryone gets 25 days of leave."),
		"bad.bin":  {0, 1, 2, 0xff, 0},
		"more.txt": []byte("Parking is free on weekends."),
	})
	var added struct{ Documents []httpapi.KnowledgeDocument }
	f.ok(f.do(f.alice, http.MethodPost, "/api/agents/helper/knowledge", body, "Content-Type: "+ct), http.StatusOK, &added)
	if len(added.Documents) != 3 {
		t.Fatalf("added %+v", added.Documents)
	}
	status := map[string]string{}
	for _, d := range added.Documents {
		status[d.Name] = d.Status
		if d.Name == "bad.bin" && !strings.Contains(d.Reason, "binary") {
			t.Errorf("bad.bin's reason = %q", d.Reason)
		}
	}
	if status["good.md"] != "ready" || status["more.txt"] != "ready" || status["bad.bin"] != "failed" {
		t.Errorf("statuses = %v", status)
	}
	var list struct{ Documents []httpapi.KnowledgeDocument }
	f.ok(f.do(f.bob, http.MethodGet, "/api/agents/helper/knowledge", nil), http.StatusOK, &list)
	if len(list.Documents) != 3 {
		t.Errorf("list = %+v", list.Documents)
	}
	f.ok(f.do(f.dave, http.MethodGet, "/api/agents/helper/knowledge", nil), http.StatusOK, &list)
	if len(list.Documents) != 0 {
		t.Errorf("another organisation sees %+v", list.Documents)
	}
	body, ct = multipartFiles(t, map[string][]byte{"good.md": []byte("x")})
	if r := f.do(f.bob, http.MethodPost, "/api/agents/helper/knowledge", body, "Content-Type: "+ct); r.StatusCode != http.StatusForbidden {
		t.Errorf("a member's upload: status %d", r.StatusCode)
	}
	id := added.Documents[0].ID
	if r := f.do(f.dave, http.MethodDelete, "/api/agents/helper/knowledge/"+id, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("another organisation's delete: status %d", r.StatusCode)
	}
	f.ok(f.do(f.alice, http.MethodDelete, "/api/agents/helper/knowledge/"+id, nil), http.StatusNoContent, nil)
	f.ok(f.do(f.alice, http.MethodGet, "/api/agents/helper/knowledge", nil), http.StatusOK, &list)
	if len(list.Documents) != 2 {
		t.Errorf("after delete = %+v", list.Documents)
	}
}
