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
	"github.com/quiverhq/quiver/knowledge"
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
			read := documents.ReadTool(documents.Sources{documents.Attachments{Store: st}, documents.Knowledge{Store: st}})
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
			t.Run("NotFoundLists", func(t *testing.T) {
				got, isErr := call(t, read, mine, map[string]any{"document": "nothing.md"})
				if !isErr || !strings.HasPrefix(got, `no document "nothing.md" here; attached to this conversation: `) ||
					!strings.Contains(got, `"plan.md"`) || !strings.Contains(got, `"long.txt"`) || !strings.Contains(got, `"locked.pdf"`) {
					t.Errorf("not found: %q", got)
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

// knowledgeFixture gives the helper agent of acme three documents (one
// with a page-spanning text, one named as an attachment of c1 is), the
// sales agent and another organisation's helper one each, and the helper
// a failed one.
func knowledgeFixture(t *testing.T, st store.Store) (handbook store.KnowledgeDocument, long string) {
	t.Helper()
	n := 0
	x := &knowledge.Index{Store: st, Embedders: models, Now: func() time.Time { return time.Unix(200, 0) },
		NewID: func(prefix string) string { n++; return fmt.Sprintf("%s-%02d", prefix, n) }}
	var paras []string
	for i := range 600 {
		paras = append(paras, fmt.Sprintf("Section %d of the handbook: staff take leave by asking their manager in writing.", i))
	}
	long = strings.Join(paras, "\n\n") // about 48,000 characters: two pages
	for _, f := range []struct {
		org, agent, name, text string
	}{
		{"acme", "helper", "handbook.md", long},
		{"acme", "helper", "plan.md", "The knowledge copy of the plan, not the attached one."},
		{"acme", "helper", "policy.txt", "Expenses over 500 euros need a receipt."},
		{"acme", "helper", "broken.bin", "\x00\x01\x02 not text"},
		{"acme", "sales", "pricing.md", "Sales pricing: secret discount of 40%."},
		{"globex", "helper", "globex.md", "Globex internal: secret merger."},
	} {
		d, err := x.Add(t.Context(), f.org, f.agent, knowledge.File{Name: f.name, MediaType: "text/plain", Data: []byte(f.text)}, nil)
		if err != nil {
			t.Fatalf("add %s: %v", f.name, err)
		}
		if f.name == "handbook.md" {
			handbook = d
		}
	}
	return handbook, long
}

func TestReadKnowledge(t *testing.T) {
	helper := mine
	helper.Agent = "helper"
	sales := mine
	sales.Agent = "sales"
	globex := tool.Scope{OrgID: "globex", UserID: "gus", ConversationID: "g1", TurnID: "tg", Agent: "helper"}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := b.open(t)
			fixture(t, st)
			handbook, long := knowledgeFixture(t, st)
			read := documents.ReadTool(documents.Sources{documents.Attachments{Store: st}, documents.Knowledge{Store: st}})
			t.Run("ByName", func(t *testing.T) {
				got, isErr := call(t, read, helper, map[string]any{"document": "POLICY.TXT"})
				if isErr || !strings.HasPrefix(got, `knowledge document "policy.txt" (text, id `) || !strings.Contains(got, "need a receipt") {
					t.Errorf("read policy.txt: %q", got)
				}
			})
			t.Run("ByIDPaged", func(t *testing.T) {
				first, isErr := call(t, read, helper, map[string]any{"document": handbook.ID})
				if isErr || !strings.Contains(first, "page 1 of 2") || !strings.Contains(first, "[More: call again with page=2.]") {
					t.Fatalf("page 1: %.200q", first)
				}
				second, isErr := call(t, read, helper, map[string]any{"document": handbook.ID, "page": 2})
				if isErr || !strings.Contains(second, "page 2 of 2") || strings.Contains(second, "[More") {
					t.Fatalf("page 2: %.200q", second)
				}
				// The pages hold the text once, overlaps of its chunks
				// removed, and nothing else.
				body := func(s string) string {
					_, rest, _ := strings.Cut(s, ":\n")
					rest, _, _ = strings.Cut(rest, "\n[More")
					return rest
				}
				if got := body(first) + body(second); got != long {
					t.Errorf("pages joined: %d characters, want the %d of the document", len([]rune(got)), len([]rune(long)))
				}
				if n := len([]rune(body(first))); n > document.PageRunes {
					t.Errorf("page 1 holds %d characters; the cap is %d", n, document.PageRunes)
				}
			})
			t.Run("Failed", func(t *testing.T) {
				got, isErr := call(t, read, helper, map[string]any{"document": "broken.bin"})
				if !isErr || !strings.Contains(got, `"broken.bin" could not be indexed`) || strings.Contains(got, "\n") {
					t.Errorf("failed document: %q", got)
				}
			})
			t.Run("AttachmentWins", func(t *testing.T) {
				got, _ := call(t, read, helper, map[string]any{"document": "plan.md"})
				if !strings.HasPrefix(got, `attachment "plan.md"`) || strings.Contains(got, "knowledge copy") {
					t.Errorf("plan.md: %q", got)
				}
			})
			t.Run("OutOfScope", func(t *testing.T) {
				for _, c := range []struct {
					name string
					s    tool.Scope
					ref  string
				}{
					{"another agent's by name", helper, "pricing.md"},
					{"another organisation's by name", helper, "globex.md"},
					{"this agent's from another agent", sales, "policy.txt"},
					{"this agent's by id from another organisation", globex, handbook.ID},
					{"no agent in the turn", mine, "policy.txt"},
				} {
					got, isErr := call(t, read, c.s, map[string]any{"document": c.ref})
					if !isErr || !strings.HasPrefix(got, "no document") || strings.Contains(got, "secret") || strings.Contains(got, "receipt") || strings.Contains(got, "Section") {
						t.Errorf("%s: %.200q", c.name, got)
					}
				}
			})
			t.Run("NotFoundListsBoth", func(t *testing.T) {
				got, isErr := call(t, read, helper, map[string]any{"document": "nothing.md"})
				attached, kn, ok := strings.Cut(got, "; in this agent's knowledge: ")
				if !isErr || !ok || !strings.HasPrefix(attached, `no document "nothing.md" here; attached to this conversation: `) {
					t.Fatalf("not found: %q", got)
				}
				for _, name := range []string{"plan.md", "long.txt", "locked.pdf"} {
					if !strings.Contains(attached, `"`+name+`"`) {
						t.Errorf("attachments listed %q, want %s among them", attached, name)
					}
				}
				// Knowledge is listed oldest first: IDs count up at one time.
				if want := `"handbook.md", "plan.md", "policy.txt", "broken.bin"`; kn != want {
					t.Errorf("knowledge listed %q, want %q", kn, want)
				}
			})
		})
	}
}

// TestKnowledgeIndexing: a document still indexing answers in one line.
func TestKnowledgeIndexing(t *testing.T) {
	st := backends[0].open(t)
	if _, err := st.PutKnowledgeDocument(t.Context(), store.KnowledgeDocument{OrgID: "acme", Agent: "helper", ID: "kdoc-1",
		Name: "draft.md", MediaType: "text/markdown", Size: 10, CreatedAt: time.Unix(300, 0)}); err != nil {
		t.Fatal(err)
	}
	read := documents.ReadTool(documents.Sources{documents.Attachments{Store: st}, documents.Knowledge{Store: st}})
	got, isErr := call(t, read, tool.Scope{OrgID: "acme", UserID: "ana", Agent: "helper"}, map[string]any{"document": "draft.md"})
	if !isErr || !strings.Contains(got, `"draft.md" is still being indexed`) || strings.Contains(got, "\n") {
		t.Errorf("indexing: %q", got)
	}
}

// TestNotFoundBounded: a not-found answer names at most MaxNames
// documents of a source and counts the rest.
func TestNotFoundBounded(t *testing.T) {
	st := backends[0].open(t)
	for i := range documents.MaxNames + 5 {
		if _, err := st.PutKnowledgeDocument(t.Context(), store.KnowledgeDocument{OrgID: "acme", Agent: "helper", ID: fmt.Sprintf("kdoc-%02d", i),
			Name: fmt.Sprintf("doc-%02d.md", i), MediaType: "text/markdown", Size: 10, CreatedAt: time.Unix(int64(300+i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	read := documents.ReadTool(documents.Sources{documents.Attachments{Store: st}, documents.Knowledge{Store: st}})
	got, _ := call(t, read, tool.Scope{OrgID: "acme", UserID: "ana", Agent: "helper"}, map[string]any{"document": "x"})
	if n := strings.Count(got, `"doc-`); n != documents.MaxNames || !strings.HasSuffix(got, `"doc-14.md" and 5 more`) || strings.Contains(got, "doc-04") {
		t.Errorf("%d names: %q", n, got)
	}
}
