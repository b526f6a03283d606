package webui_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// writeFiles writes each file into a new folder and returns their paths
// by name.
func writeFiles(t *testing.T, files map[string][]byte) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}

// binaryFile is bytes no reader takes: a PNG's signature and zeros.
func binaryFile() []byte {
	return append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 512)...)
}

// chip is the composer's chip of the file name.
func chip(name string) string {
	return fmt.Sprintf(`#attachments li.attach-chip[data-name=%q]`, name)
}

// storedFiles are the names of the conversation's attachments in the
// store, oldest first.
func storedFiles(t *testing.T, st store.Store, conv string) []string {
	t.Helper()
	as, err := st.ListAttachments(context.Background(), "org_a", conv)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, a := range as {
		names = append(names, a.Name)
	}
	return names
}

// TestAttachmentsAgainstHTTPAPI: over the real API, a file picked with
// the attach button in a new chat stores the conversation and the file,
// shows as a chip, and goes with the message into the transcript (a
// download link to its bytes, still there after a reload); a file over
// the limit and a binary file each say why in one line and store
// nothing; a removed chip deletes its file; files attached and not sent
// come back in the composer after a reload; dropped and pasted files
// are uploaded as picked ones are.
func TestAttachmentsAgainstHTTPAPI(t *testing.T) {
	st, _, b := realAPI(t)
	notes := "# Launch notes\n\nThe launch is on Friday; Bruno signs off the budget.\n"
	paths := writeFiles(t, map[string][]byte{
		"notes.md":  []byte(notes),
		"photo.png": binaryFile(),
		"huge.txt":  make([]byte, 30<<20),
		"later.txt": []byte("Attached, not sent yet.\n"),
	})
	b.open("#/chat", `.new-conv #attach`)

	// The button: the conversation is stored with the file.
	b.Do("attach notes.md", chromedp.SetUploadFiles(chromedp.CSS(`#attach-input`), []string{paths["notes.md"]}),
		chromedp.WaitVisible(chromedp.CSS(chip("notes.md")+`[data-state="ready"]`)))
	b.WaitText(chip("notes.md"), "Attached")
	b.WaitText(chip("notes.md")+` .attach-size`, "69 bytes")
	b.WaitText(`#attach-status`, "notes.md attached") // said to a screen reader
	cs, err := st.ListConversations(context.Background(), "org_a", "ana", 0)
	if err != nil || len(cs) != 1 {
		t.Fatalf("after attaching in a new chat: %d conversations (%v), want 1", len(cs), err)
	}
	conv := cs[0].ID
	if got := eval[string](b, `location.hash`); got != "#/chat/"+conv {
		t.Errorf("the page is at %s, want the conversation's address", got)
	}
	if d := cmp.Diff([]string{"notes.md"}, storedFiles(t, st, conv)); d != "" {
		t.Errorf("stored files (-want +got):\n%s", d)
	}

	// Over the limit: refused before any byte is sent.
	b.Do("attach huge.txt", chromedp.SetUploadFiles(chromedp.CSS(`#attach-input`), []string{paths["huge.txt"]}),
		chromedp.WaitVisible(chromedp.CSS(chip("huge.txt")+`[data-state="error"]`)))
	b.WaitText(chip("huge.txt")+` .attach-error`, "huge.txt is 30 MB; the limit for one file is 25 MB.")
	// A binary file: the API's refusal, in one line.
	b.Do("attach photo.png", chromedp.SetUploadFiles(chromedp.CSS(`#attach-input`), []string{paths["photo.png"]}),
		chromedp.WaitVisible(chromedp.CSS(chip("photo.png")+`[data-state="error"]`)))
	b.WaitText(chip("photo.png")+` .attach-error`, `photo.png was not attached: "photo.png" (image/png) is a binary file; only PDF, DOCX and UTF-8 text can be read`)
	if n := eval[int](b, `document.querySelectorAll('#attachments .attach-error').length`); n != 2 {
		t.Errorf("%d error lines, want one for each refused file", n)
	}
	b.ShotView("chips")
	if d := cmp.Diff([]string{"notes.md"}, storedFiles(t, st, conv)); d != "" {
		t.Errorf("stored files after the refusals (-want +got):\n%s", d)
	}
	uploads := b.requests("POST", "/api/conversations/"+conv+"/attachments")
	if len(uploads) != 2 || uploads[0].Status != 201 || uploads[1].Status != 415 {
		t.Errorf("uploads %+v, want notes.md's (201) and photo.png's (415) only", uploads)
	}

	// Removed from the keyboard: the refused chip goes, focus stays on
	// the next remove button.
	b.Do("remove huge.txt", chromedp.Focus(chromedp.CSS(chip("huge.txt")+` .attach-remove`)), chromedp.KeyEvent("\r"),
		chromedp.WaitNotPresent(chromedp.CSS(chip("huge.txt"))))
	if got := eval[string](b, `document.activeElement.getAttribute('aria-label')`); got != "Remove photo.png" {
		t.Errorf("focus after removing a chip: %q", got)
	}

	// Sent: the stored file goes with the message; the refused one is
	// dropped.
	b.send("Summarise these notes")
	b.WaitText(`.transcript`, "Using Summarise these notes: 4.00.")
	file := `.transcript li.msg.user .msg-files li.msg-file a.file-name`
	b.WaitText(file, "notes.md")
	if n := eval[int](b, `document.querySelectorAll('#attachments li').length`); n != 0 {
		t.Errorf("%d chips left after sending", n)
	}
	got := eval[string](b, `fetch(document.querySelector('`+file+`').href).then((r) => r.text())`, chromedp.EvalAwaitPromise)
	if got != notes {
		t.Errorf("the download link gives %q, want the file", got)
	}
	b.ShotView("sent")

	// After a reload: the file still shows with its message.
	b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(file)))
	b.WaitText(`.transcript li.msg.user`, "Summarise these notes")
	b.WaitText(file, "notes.md")
	if n := eval[int](b, `document.querySelectorAll('#attachments li').length`); n != 0 {
		t.Errorf("%d chips in the composer after a reload, want none", n)
	}

	// Attached, not sent, reloaded: back in the composer; removed: deleted.
	b.Do("attach later.txt", chromedp.SetUploadFiles(chromedp.CSS(`#attach-input`), []string{paths["later.txt"]}),
		chromedp.WaitVisible(chromedp.CSS(chip("later.txt")+`[data-state="ready"]`)))
	b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(chip("later.txt")+`[data-state="ready"]`)))
	if n := eval[int](b, `document.querySelectorAll('.transcript .msg-file').length`); n != 1 {
		t.Errorf("%d files in the transcript, want notes.md alone", n)
	}
	b.Do("remove later.txt", chromedp.Click(chromedp.CSS(chip("later.txt")+` .attach-remove`)),
		chromedp.WaitNotPresent(chromedp.CSS(chip("later.txt"))))
	if got := eval[string](b, `document.activeElement.id`); got != "message" {
		t.Errorf("focus after removing the last chip: %q, want the message box", got)
	}
	if d := cmp.Diff([]string{"notes.md"}, storedFiles(t, st, conv)); d != "" {
		t.Errorf("stored files after removing later.txt (-want +got):\n%s", d)
	}

	// Dropped on the thread and pasted in the message box.
	b.Do("drop a file", chromedp.Evaluate[chromedp.Void](`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(['Dropped text\n'], 'dropped.txt', { type: 'text/plain' }));
		document.querySelector('.transcript').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
	})()`), chromedp.WaitVisible(chromedp.CSS(chip("dropped.txt")+`[data-state="ready"]`)))
	b.Do("paste a file", chromedp.Evaluate[chromedp.Void](`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(['Pasted text\n'], 'pasted.txt', { type: 'text/plain' }));
		document.getElementById('message').dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
	})()`), chromedp.WaitVisible(chromedp.CSS(chip("pasted.txt")+`[data-state="ready"]`)))
	if d := cmp.Diff([]string{"notes.md", "dropped.txt", "pasted.txt"}, storedFiles(t, st, conv)); d != "" {
		t.Errorf("stored files after the drop and the paste (-want +got):\n%s", d)
	}
	b.send("And these")
	b.WaitText(`.transcript`, "Using And these: 4.00.")
	b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(file)))
	b.WaitText(`.transcript`, "And these")
	byMessage := eval[[]string](b, `Array.from(document.querySelectorAll('.transcript li.msg.user'),
		(li) => li.querySelector('.text').textContent + ': ' + Array.from(li.querySelectorAll('.msg-file .file-name'), (a) => a.textContent).join(', '))`)
	if d := cmp.Diff([]string{"Summarise these notes: notes.md", "And these: dropped.txt, pasted.txt"}, byMessage); d != "" {
		t.Errorf("files by message after a reload (-want +got):\n%s", d)
	}
}

// TestAttachLimitMatchesStore: the pages refuse files over the store's
// limits before sending them.
func TestAttachLimitMatchesStore(t *testing.T) {
	for file, want := range map[string]int64{
		"assets/js/attachments.js": store.MaxAttachmentBytes,
		"assets/js/knowledge.js":   store.MaxKnowledgeFileBytes,
	} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`MAX_FILE_BYTES = 25 \* 1024 \* 1024;`).Find(src)
		if m == nil || want != 25<<20 {
			t.Errorf("%s: MAX_FILE_BYTES is not 25 MiB, or the store's limit (%d) is not", file, want)
		}
	}
}

// knowledgeRows are the agent page's documents: name and state.
func (b *browser) knowledgeRows() []string {
	b.t.Helper()
	return eval[[]string](b, `Array.from(document.querySelectorAll('#knowledge-list tbody tr'),
		(tr) => tr.cells[0].textContent + ' | ' + tr.querySelector('.knowledge-state').textContent)`)
}

// TestKnowledgeOnAgentPage: over the real API, the agent page lists the
// agent's documents with their state, follows one that is indexing
// until it ends (here failed, with its reason), adds a file picked with
// the button (indexed, with its passages) and one that cannot be read
// (failed, the others kept), and removes a document after a
// confirmation.
func TestKnowledgeOnAgentPage(t *testing.T) {
	st, _, b := realAPI(t)
	ctx := context.Background()
	b.open("#/agents/assistant", `#knowledge-none`)
	b.WaitText(`#knowledge-none`, "This agent has no knowledge yet.")

	// A document indexing elsewhere (the CLI, another replica): its
	// progress shows and the list follows it to its end.
	now := clock.Now().UTC()
	d, err := st.PutKnowledgeDocument(ctx, store.KnowledgeDocument{OrgID: "org_a", Agent: "assistant", ID: "kdoc_scan",
		Name: "scan.pdf", MediaType: "application/pdf", Size: 2048, CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddKnowledgeChunks(ctx, "org_a", "assistant", d.ID, 3, []store.KnowledgeChunk{{Seq: 0, Text: "Page one."}}, now); err != nil {
		t.Fatal(err)
	}
	b.open("#/agents", `li[data-agent="assistant"]`)
	b.open("#/agents/assistant", `tr[data-document="kdoc_scan"][data-status="indexing"]`)
	b.WaitText(`tr[data-document="kdoc_scan"]`, "Indexing 1 of 3 passages")
	b.Shot("indexing")
	if _, err := st.FinishKnowledgeDocument(ctx, "org_a", "assistant", d.ID, "the PDF is encrypted", clock.Now()); err != nil {
		t.Fatal(err)
	}
	b.Do("indexing ends", chromedp.WaitVisible(chromedp.CSS(`tr[data-document="kdoc_scan"][data-status="failed"]`)))
	b.WaitText(`tr[data-document="kdoc_scan"]`, "Failed the PDF is encrypted")

	// Added with the button: indexed before the answer.
	handbook := strings.Repeat("Expenses over 500 euros need a manager's approval before purchase. ", 40)
	paths := writeFiles(t, map[string][]byte{"handbook.md": []byte(handbook), "logo.png": binaryFile()})
	b.Do("add handbook.md and logo.png", chromedp.SetUploadFiles(chromedp.CSS(`#knowledge-input`), []string{paths["handbook.md"], paths["logo.png"]}))
	b.WaitText(`#knowledge-status`, "Added handbook.md: ")
	b.WaitText(`#knowledge-status`, "logo.png could not be indexed: ")
	b.Do("listed", chromedp.WaitVisible(chromedp.CSS(`#knowledge-list tr[data-status="ready"]`)))
	docs, err := st.ListKnowledgeDocuments(ctx, "org_a", "assistant")
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	var ready store.KnowledgeDocument
	for _, d := range docs {
		state[d.Name] = string(d.Status)
		if d.Name == "handbook.md" {
			ready = d
		}
	}
	if d := cmp.Diff(map[string]string{"scan.pdf": "failed", "handbook.md": "ready", "logo.png": "failed"}, state); d != "" {
		t.Fatalf("stored documents (-want +got):\n%s", d)
	}
	if ready.Chunks < 1 {
		t.Fatalf("handbook.md stored with %d chunks", ready.Chunks)
	}
	b.WaitText(`tr[data-document="`+ready.ID+`"] .knowledge-state`, fmt.Sprintf("Indexed %d passage", ready.Chunks))
	b.WaitText(`tr[data-status="failed"]:not([data-document="kdoc_scan"]) .knowledge-reason`, "binary file")
	b.Shot("listed")

	// Removed after a confirmation.
	del := `tr[data-document="` + ready.ID + `"] button.remove-document`
	b.Do("remove", chromedp.Click(chromedp.CSS(del)))
	b.confirmDialog("Remove “handbook.md” from this agent's knowledge?", "no")
	if _, err := st.GetKnowledgeDocument(ctx, "org_a", "assistant", ready.ID); err != nil {
		t.Fatalf("answering no removed the document: %v", err)
	}
	b.Do("remove again", chromedp.Click(chromedp.CSS(del)))
	b.confirmDialog("Its passages are deleted with it.", "yes")
	b.Do("gone", chromedp.WaitNotPresent(chromedp.CSS(`tr[data-document="`+ready.ID+`"]`)))
	b.WaitText(`#knowledge-status`, "Removed handbook.md.")
	if _, err := st.GetKnowledgeDocument(ctx, "org_a", "assistant", ready.ID); err == nil {
		t.Error("handbook.md is still stored after the remove")
	}
	if rows := b.knowledgeRows(); len(rows) != 2 {
		t.Errorf("rows after the remove: %q, want scan.pdf and logo.png", rows)
	}

	// Dropped on the section: added as a picked file is.
	b.Do("drop a file", chromedp.Evaluate[chromedp.Void](`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(['Holidays: the office closes on public holidays.\n'], 'holidays.md', { type: 'text/markdown' }));
		document.getElementById('knowledge-list').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
	})()`))
	b.WaitText(`#knowledge-status`, "Added holidays.md: 1 passage.")
	b.WaitText(`#knowledge-list`, "holidays.md")

	// A member sees the documents, and neither adds nor removes.
	now = clock.Now().UTC()
	if err := st.CreateUser(ctx, store.User{ID: "bruno", OrgID: "org_a", DisplayName: "Bruno Costa", Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	b.signInAs(st, "bruno")
	b.open("#/agents/assistant", `#knowledge-list tr[data-status="ready"]`)
	if n := eval[int](b, `document.querySelectorAll('#knowledge-add, #knowledge-input, .remove-document').length`); n != 0 {
		t.Errorf("a member is offered %d controls to change knowledge", n)
	}
	if rows := b.knowledgeRows(); len(rows) != 3 {
		t.Errorf("a member's rows: %q, want the agent's three documents", rows)
	}
}

// signInAs signs the browser out and in again as user of org_a, with a
// new login link from st.
func (b *browser) signInAs(st store.Store, user string) {
	b.t.Helper()
	ctx := context.Background()
	now := clock.Now().UTC()
	link, err := (&accounts.Service{Store: st}).Issue(ctx, store.Credential{Kind: store.CredLoginLink, OrgID: "org_a", UserID: user,
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		b.t.Fatal(err)
	}
	func() {
		ctx, cancel := b.Step()
		defer cancel()
		if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
			b.t.Fatalf("clear cookies: %v", err)
		}
	}()
	b.Do("open "+user+"'s link", chromedp.Navigate(b.srv.URL+"/login?token="+link), chromedp.WaitVisible(chromedp.CSS(`#sign-in[data-armed]`)))
	b.Do("sign in as "+user, chromedp.Click(chromedp.CSS(`#sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#nav`)))
}

// putKnowledge stores three documents of the agent assistant: one
// indexing (1 of 3 passages), one failed, one ready.
func putKnowledge(t *testing.T, st store.Store) {
	t.Helper()
	ctx := context.Background()
	now := clock.Now().UTC()
	for _, d := range []struct {
		id, name, reason string
		chunks, total    int
		finish           bool
	}{
		{"kdoc_a", "handbook.md", "", 2, 2, true},
		{"kdoc_b", "scan.pdf", "the PDF is encrypted", 0, 0, true},
		{"kdoc_c", "policies.docx", "", 1, 3, false},
	} {
		if _, err := st.PutKnowledgeDocument(ctx, store.KnowledgeDocument{OrgID: "org_a", Agent: "assistant", ID: d.id,
			Name: d.name, MediaType: "text/plain", Size: 4096, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		var chunks []store.KnowledgeChunk
		for i := range d.chunks {
			chunks = append(chunks, store.KnowledgeChunk{Seq: i, Text: fmt.Sprintf("Passage %d of %s.", i+1, d.name)})
		}
		if len(chunks) > 0 {
			if _, err := st.AddKnowledgeChunks(ctx, "org_a", "assistant", d.id, d.total, chunks, now); err != nil {
				t.Fatal(err)
			}
		}
		if d.finish {
			if _, err := st.FinishKnowledgeDocument(ctx, "org_a", "assistant", d.id, d.reason, now); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSendWaitsForUploads: while a file is uploading, Send says to wait
// and sends nothing; once the upload ends the message goes with the file.
func TestSendWaitsForUploads(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		release := api.hold("upload")
		paths := writeFiles(t, map[string][]byte{"plan.txt": []byte("The plan.\n")})
		b.open("#/chat/"+stubConv, `#attach`)
		b.Do("attach plan.txt", chromedp.SetUploadFiles(chromedp.CSS(`#attach-input`), []string{paths["plan.txt"]}),
			chromedp.WaitVisible(chromedp.CSS(chip("plan.txt")+`[data-state="uploading"]`)))
		b.WaitText(chip("plan.txt"), "Uploading…")
		b.send("Read the plan")
		b.WaitText(`#composer-status`, "Wait until every file has finished uploading, then send.")
		if n := len(b.requests("POST", "/api/conversations/"+stubConv+"/messages")); n != 0 {
			t.Errorf("%d messages sent while a file was uploading", n)
		}
		if got := eval[string](b, `document.getElementById('message').value`); got != "Read the plan" {
			t.Errorf("the message box holds %q while the file uploads", got)
		}
		b.ShotView("uploading")
		release()
		b.Do("uploaded", chromedp.WaitVisible(chromedp.CSS(chip("plan.txt")+`[data-state="ready"]`)))
		b.Do("send", chromedp.Click(chromedp.CSS(`#send`)))
		b.WaitText(`.transcript .msg.assistant:last-child .text`, "You said: Read the plan")
		b.until("the file with its message", `[...document.querySelectorAll('.transcript li.msg.user')].pop()?.querySelector('.msg-files')?.textContent.includes('plan.txt')`)
		b.fits(w, "a message with its file")
	})
}
