package documents_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/attachment"
	"github.com/quiverhq/quiver/builtin/documents"
	"github.com/quiverhq/quiver/document"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/postgres"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// backends open each store the tools are tested on.
var backends = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"SQLite", func(t *testing.T) store.Store {
		st, err := sqlite.Open(t.Context(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"PostgreSQL", func(t *testing.T) store.Store {
		st, err := postgres.Open(t.Context(), pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
}

var (
	mine    = tool.Scope{OrgID: "acme", UserID: "ana", ConversationID: "c1", TurnID: "t1"}
	sibling = tool.Scope{OrgID: "acme", UserID: "ana", ConversationID: "c2", TurnID: "t2"}
	bob     = tool.Scope{OrgID: "acme", UserID: "bob", ConversationID: "c3", TurnID: "t3"}
	models  = embed.Fixed{E: embed.Local{}}
)

// fixture attaches files to three conversations: ana's c1 and c2, and
// bob's c3.
func fixture(t *testing.T, st store.Store) *attachment.Adder {
	t.Helper()
	add := attachment.New(attachment.Config{Store: st, Embed: models, Now: func() time.Time { return time.Unix(100, 0) },
		Extract: document.Extractor{ReadPDF: func(context.Context, []byte) (string, string, error) {
			return "", "", errors.New("could not read this PDF: it is encrypted")
		}}})
	long := strings.Repeat(strings.Repeat("Dòng văn bản dài để chia trang. ", 3)+"\n", 1500) // about 145,000 characters
	for _, f := range []struct {
		s          tool.Scope
		name, text string
	}{
		{mine, "plan.md", "# Plan\n\nThe launch is on Tuesday at the harbour.\n\nBudget: forty thousand dong."},
		{mine, "long.txt", long},
		{mine, "locked.pdf", "%PDF-1.7\n"},
		{sibling, "sibling.md", "The launch of the sibling conversation is secret harbour news."},
		{bob, "bob.md", "Bob's launch notes about the harbour."},
	} {
		if _, err := add.Add(t.Context(), f.s.OrgID, f.s.UserID, f.s.ConversationID,
			attachment.File{Name: f.name, MediaType: "text/plain", Data: []byte(f.text)}); err != nil {
			t.Fatalf("attach %s: %v", f.name, err)
		}
	}
	return add
}

func call(t *testing.T, tl *tool.Tool, s tool.Scope, args any) (string, bool) {
	t.Helper()
	raw, _ := json.Marshal(args)
	r, err := tl.Run(t.Context(), s, raw)
	if err != nil {
		// A handler's error is what the model reads as an error result.
		return err.Error(), true
	}
	return r.Content, r.IsError
}

func TestTools(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := b.open(t)
			fixture(t, st)
			read := documents.ReadTool(documents.Sources{documents.Attachments{Store: st}})
			search := documents.SearchTool(st, models)
			t.Run("ReadByName", func(t *testing.T) {
				got, isErr := call(t, read, mine, map[string]any{"document": "plan.md"})
				if isErr || !strings.Contains(got, "page 1 of 1") || !strings.Contains(got, "Tuesday at the harbour") {
					t.Errorf("read plan.md: %q", got)
				}
			})
			t.Run("ReadPages", func(t *testing.T) {
				first, _ := call(t, read, mine, map[string]any{"document": "LONG.TXT"})
				if !strings.Contains(first, "page 1 of 4") || !strings.Contains(first, "page=2") || len([]rune(first)) > document.PageRunes+300 {
					t.Errorf("page 1: %d characters, head %q", len([]rune(first)), first[:80])
				}
				last, _ := call(t, read, mine, map[string]any{"document": "long.txt", "page": 4})
				if !strings.Contains(last, "page 4 of 4") || strings.Contains(last, "[More") {
					t.Errorf("page 4 head %q", last[:80])
				}
				past, isErr := call(t, read, mine, map[string]any{"document": "long.txt", "page": 5})
				if !isErr || !strings.Contains(past, "4 page(s)") {
					t.Errorf("page 5: %q", past)
				}
			})
			t.Run("ReadEncrypted", func(t *testing.T) {
				got, isErr := call(t, read, mine, map[string]any{"document": "locked.pdf"})
				if !isErr || !strings.Contains(got, "encrypted PDF") || strings.Contains(got, "\n") {
					t.Errorf("encrypted: %q", got)
				}
			})
			t.Run("ReadIsolation", func(t *testing.T) {
				for _, name := range []string{"sibling.md", "bob.md"} {
					got, isErr := call(t, read, mine, map[string]any{"document": name})
					if !isErr || !strings.Contains(got, "no document") || strings.Contains(got, "secret") || strings.Contains(got, "Bob's") {
						t.Errorf("read %s from c1: %q", name, got)
					}
				}
				// By ID: bob's file is not reachable from ana's conversation.
				list, _ := st.ListAttachments(t.Context(), bob.OrgID, bob.ConversationID)
				got, isErr := call(t, read, mine, map[string]any{"document": list[0].ID})
				if !isErr || strings.Contains(got, "Bob's") {
					t.Errorf("read bob's file by id: %q", got)
				}
			})
			t.Run("Search", func(t *testing.T) {
				got, isErr := call(t, search, mine, map[string]any{"query": "when is the launch at the harbour"})
				if isErr || !strings.Contains(got, "plan.md") || !strings.Contains(got, "Tuesday") {
					t.Errorf("search: %q", got)
				}
				if strings.Contains(got, "sibling") || strings.Contains(got, "Bob") {
					t.Errorf("search reached another conversation: %q", got)
				}
			})
			t.Run("SearchDefaultLimit", func(t *testing.T) {
				got, _ := call(t, search, mine, map[string]any{"query": "dòng văn bản trang"})
				if n := strings.Count(got, "\n\n["); n != documents.DefaultResults {
					t.Errorf("%d passages, want the default %d", n, documents.DefaultResults)
				}
			})
		})
	}
}

func TestRequires(t *testing.T) {
	read := documents.ReadTool(nil)
	search := documents.SearchTool(nil, nil)
	cases := []struct {
		sel              turn.Selection
		wantRead, wantSr string
	}{
		{turn.Selection{}, "nothing attached to the conversation and no knowledge on the agent",
			"nothing attached to the conversation; no embedding model configured"},
		{turn.Selection{Attachments: 1}, "", "no embedding model configured"},
		{turn.Selection{Backends: []string{"embedding"}}, "nothing attached to the conversation and no knowledge on the agent", "nothing attached to the conversation"},
		{turn.Selection{Knowledge: true, Backends: []string{"embedding"}}, "", "nothing attached to the conversation"},
		{turn.Selection{Attachments: 2, Backends: []string{"embedding"}}, "", ""},
	}
	for i, c := range cases {
		if got := read.Spec().Requires(c.sel); got != c.wantRead {
			t.Errorf("%d: read_document requires %q, want %q", i, got, c.wantRead)
		}
		if got := search.Spec().Requires(c.sel); got != c.wantSr {
			t.Errorf("%d: search_attachments requires %q, want %q", i, got, c.wantSr)
		}
	}
}

func TestArgumentBounds(t *testing.T) {
	st := backends[0].open(t)
	read := documents.ReadTool(documents.Sources{documents.Attachments{Store: st}})
	search := documents.SearchTool(st, models)
	for _, c := range []struct {
		tl   *tool.Tool
		args map[string]any
		want string
	}{
		{read, map[string]any{"document": strings.Repeat("x", documents.MaxRefBytes+1)}, "at most"},
		{read, map[string]any{"document": " "}, "empty"},
		{search, map[string]any{"query": strings.Repeat("q", documents.MaxQueryRunes+1)}, "limit is"},
		{search, map[string]any{"query": "x", "limit": documents.MaxResults + 1}, ""},
	} {
		got, isErr := call(t, c.tl, mine, c.args)
		if !isErr || !strings.Contains(got, c.want) {
			t.Errorf("%s %.40v: %q, want an error with %q", c.tl.Name(), c.args, got, c.want)
		}
	}
}

// TestAdderRefuses: a binary file and one past the quota are refused
// before anything is stored.
func TestAdderRefuses(t *testing.T) {
	st := backends[0].open(t)
	add := attachment.New(attachment.Config{Store: st, Quota: store.AttachmentQuota{MaxCount: 1}})
	_, err := add.Add(t.Context(), "acme", "ana", "c1", attachment.File{Name: "x.bin", Data: []byte{0, 1, 2, 0xff}})
	if !errors.Is(err, attachment.ErrRefused) || !errors.Is(err, document.ErrBinary) {
		t.Errorf("binary: %v", err)
	}
	if _, err := add.Add(t.Context(), "acme", "ana", "c1", attachment.File{Name: "a.txt", Data: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	_, err = add.Add(t.Context(), "acme", "ana", "c1", attachment.File{Name: "b.txt", Data: []byte("b")})
	if !errors.Is(err, attachment.ErrRefused) || !errors.Is(err, store.ErrAttachmentQuota) {
		t.Errorf("past the quota: %v", err)
	}
	if n, _ := st.CountAttachments(t.Context(), "acme", "c1"); n != 1 {
		t.Errorf("%d stored, want 1", n)
	}
	_ = fmt.Sprint
}
