package webui_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// download clicks the export menu's item for format and returns the file
// the browser saved: its suggested name and its bytes.
func (b *browser) download(format string) (name string, body []byte) {
	b.t.Helper()
	dir := b.t.TempDir()
	ctx, cancel := b.Step()
	defer cancel()
	type done struct{ name, path string }
	began := make(chan string, 1)
	finished := make(chan done, 1)
	var suggested string
	if err := chromedp.ListenBrowser(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *cdpbrowser.EventDownloadWillBegin:
			select {
			case began <- ev.SuggestedFilename:
			default:
			}
		case *cdpbrowser.EventDownloadProgress:
			if ev.State == cdpbrowser.DownloadProgressStateCompleted {
				select {
				case finished <- done{path: ev.FilePath}:
				default:
				}
			}
		}
	}); err != nil {
		b.t.Fatal(err)
	}
	on := true
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir, EventsEnabled: &on}); err != nil {
		b.t.Fatal(err)
	}
	b.Do("open Export", chromedp.Click(chromedp.CSS(`.export-menu summary`)))
	b.until("menu open", `document.querySelector('.export-menu').open`)
	b.Do("export "+format, chromedp.Click(chromedp.CSS(`.export-menu button[data-format="`+format+`"]`)))
	select {
	case suggested = <-began:
	case <-ctx.Done():
		b.Shot("failed")
		b.t.Fatalf("export %s: no download began", format)
	}
	var d done
	select {
	case d = <-finished:
	case <-ctx.Done():
		b.t.Fatalf("export %s: the download did not finish", format)
	}
	if d.path == "" {
		d.path = filepath.Join(dir, suggested)
	}
	body, err := os.ReadFile(d.path)
	if err != nil {
		b.t.Fatal(err)
	}
	return suggested, body
}

func TestConversationExport(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		b.open("#/chat/"+stubConv, `#message`)
		name, md := b.download("md")
		if name != "quiver-conv_1.md" {
			t.Errorf("Markdown file named %q", name)
		}
		text := string(md)
		for _, want := range []string{
			"# Chat with assistant\n",
			"Agent: assistant",
			"## You\n\nEarlier question\n",
			"## Agent\n\nEarlier answer\n",
			"## You\n\nHi there\n",
			"## Agent\n\nHello **Ana**. How can I help?\n",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the Markdown export lacks %q:\n%s", want, text)
			}
		}
		if strings.Index(text, "Earlier question") > strings.Index(text, "Hi there") {
			t.Error("the Markdown export is not oldest first")
		}
		if strings.Contains(text, "Caller: Ana Lima") {
			t.Error("the Markdown export shows the context message")
		}

		name, raw := b.download("json")
		if name != "quiver-conv_1.json" {
			t.Errorf("JSON file named %q", name)
		}
		var doc struct {
			Conversation struct{ ID, Agent string }
			ExportedAt   time.Time `json:"exported_at"`
			Messages     []struct {
				Seq     int
				Role    string
				Content string
			}
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("the JSON export: %v\n%s", err, raw)
		}
		var seqs []int
		for _, m := range doc.Messages {
			seqs = append(seqs, m.Seq)
		}
		if d := cmp.Diff([]int{1, 2, 11, 12, 13}, seqs); d != "" {
			t.Errorf("exported messages (-want +got):\n%s", d)
		}
		if doc.Conversation.ID != stubConv || doc.Conversation.Agent != "assistant" || doc.ExportedAt.IsZero() {
			t.Errorf("exported conversation %+v at %v", doc.Conversation, doc.ExportedAt)
		}
		if got := b.requests("GET", convPath+"/messages"); len(got) != 5 {
			// The page's own read, then both pages for each export.
			t.Errorf("%d transcript requests, want 5", len(got))
		}
	})
}
