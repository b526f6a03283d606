package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/attachment"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

// multipartFile is a multipart body holding one file in the field "file".
func multipartFile(t *testing.T, name string, data []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(data)
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// TestAttachments: upload, list, download and delete; a binary file is a
// 415 and an oversized one a 413, nothing stored; another user of the
// organisation, and another organisation, reach none of it.
func TestAttachments(t *testing.T) {
	var st store.Store
	f := newFixture(t, func(c *httpapi.Config) {})
	st = f.st
	f.srv.Config.Handler = httpapi.New(httpapi.Config{Store: st, Engine: f.eng, Heartbeat: -1, Now: f.clock.Now,
		Attachments: attachment.New(attachment.Config{Store: st, Now: f.clock.Now})})
	f.must(st.PutConversation(f.ctx, store.Conversation{ID: "conv_1", OrgID: "org_a", UserID: "bob", Agent: "helper", CreatedAt: start, UpdatedAt: start}))
	upload := func(name string, data []byte) response {
		body, ct := multipartFile(t, name, data)
		return f.do(f.bob, http.MethodPost, "/api/conversations/conv_1/attachments", body, "Content-Type: "+ct)
	}
	var att httpapi.Attachment
	f.ok(upload("notes.md", []byte("# Notes\n\nThe launch is on Tuesday.")), http.StatusCreated, &att)
	if att.Status != "ready" || att.Kind != "text" || att.Chunks != 1 || att.Name != "notes.md" {
		t.Errorf("uploaded %+v", att)
	}
	wantError(t, upload("photo.md", []byte{0x89, 'P', 'N', 'G', 0, 0, 0, 1}), http.StatusUnsupportedMediaType, "unsupported_file")
	wantError(t, upload("big.txt", bytes.Repeat([]byte("a"), store.MaxAttachmentBytes+1)), http.StatusRequestEntityTooLarge, "attachment_too_large")
	var list struct{ Attachments []httpapi.Attachment }
	f.ok(f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/attachments", nil), http.StatusOK, &list)
	if len(list.Attachments) != 1 || list.Attachments[0].ID != att.ID {
		t.Errorf("list %+v, want the one file", list)
	}
	dl := f.do(f.bob, http.MethodGet, "/api/conversations/conv_1/attachments/"+att.ID, nil)
	if dl.StatusCode != http.StatusOK || !strings.Contains(string(dl.body), "Tuesday") || !strings.Contains(dl.Header.Get("Content-Disposition"), "notes.md") {
		t.Errorf("download: %d %q %q", dl.StatusCode, dl.body, dl.Header.Get("Content-Disposition"))
	}
	for _, who := range []*who{f.carol, f.dave} {
		for _, r := range []response{
			f.do(who, http.MethodGet, "/api/conversations/conv_1/attachments", nil),
			f.do(who, http.MethodGet, "/api/conversations/conv_1/attachments/"+att.ID, nil),
			f.do(who, http.MethodDelete, "/api/conversations/conv_1/attachments/"+att.ID, nil),
		} {
			if r.StatusCode != http.StatusNotFound || strings.Contains(string(r.body), "Tuesday") {
				t.Errorf("another user: %s %s = %d %s", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.body)
			}
		}
		body, ct := multipartFile(t, "x.txt", []byte("x"))
		if r := f.do(who, http.MethodPost, "/api/conversations/conv_1/attachments", body, "Content-Type: "+ct); r.StatusCode != http.StatusNotFound {
			t.Errorf("another user's upload: %d", r.StatusCode)
		}
	}
	if r := f.do(f.bob, http.MethodDelete, "/api/conversations/conv_1/attachments/"+att.ID, nil); r.StatusCode != http.StatusNoContent {
		t.Errorf("delete: %d %s", r.StatusCode, r.body)
	}
	if n, _ := st.CountAttachments(f.ctx, "org_a", "conv_1"); n != 0 {
		t.Errorf("%d attachments after the delete", n)
	}
}

// TestUploadsLeaveNoTemporaryFiles uploads files larger than what a
// multipart form keeps in memory — stored, refused as too large, refused
// for another user — and finds none of the temporary files they were
// spooled to left behind.
func TestUploadsLeaveNoTemporaryFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	f := newFixture(t, func(c *httpapi.Config) {})
	f.srv.Config.Handler = httpapi.New(httpapi.Config{Store: f.st, Engine: f.eng, Heartbeat: -1, Now: f.clock.Now,
		Attachments: attachment.New(attachment.Config{Store: f.st, Now: f.clock.Now})})
	f.must(f.st.PutConversation(f.ctx, store.Conversation{ID: "conv_1", OrgID: "org_a", UserID: "bob", Agent: "helper", CreatedAt: start, UpdatedAt: start}))
	upload := func(w *who, name string, data []byte) response {
		body, ct := multipartFile(t, name, data)
		return f.do(w, http.MethodPost, "/api/conversations/conv_1/attachments", body, "Content-Type: "+ct)
	}
	f.ok(upload(f.bob, "notes.txt", bytes.Repeat([]byte("launch on Tuesday\n"), 20000)), http.StatusCreated, nil)
	wantError(t, upload(f.bob, "big.txt", bytes.Repeat([]byte("a"), store.MaxAttachmentBytes+1)), http.StatusRequestEntityTooLarge, "attachment_too_large")
	wantError(t, upload(f.carol, "notes.txt", bytes.Repeat([]byte("b"), 200000)), http.StatusNotFound, "not_found")
	left, err := os.ReadDir(tmp)
	f.must(err)
	var names []string
	for _, e := range left {
		if strings.HasPrefix(e.Name(), "multipart-") {
			names = append(names, e.Name())
		}
	}
	if len(names) > 0 {
		t.Errorf("uploads left %d temporary files: %v", len(names), names)
	}
}
