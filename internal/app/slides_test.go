package app_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestSlidesTurnEndToEnd runs the product document's kind of turn, a
// slide deck made over eleven model calls: the agent plans with its
// checklist, writes an HTML deck, inspects it in the real headless
// Chromium (the screenshot reaching the vision model), fixes what the
// inspection found, has a save refused because the fix was not inspected,
// inspects again, saves, prints a PDF into the workspace and ticks its
// checklist off. The store ends with one checked version and the
// workspace with the PDF.
func TestSlidesTurnEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil && os.Getenv("QUIVER_REQUIRE_PEERS") != "1" {
		t.Skip("no chromium (install the Debian package chromium)")
	}
	deck := `<!doctype html><html><head><style>section{width:1200px;height:640px;margin:10px;border:1px solid #ccc}</style></head>
<body><section><h1>Q3 review</h1><img src="https://cdn.example.com/logo.png"></section><section><h2>Revenue</h2><p>Up 12%.</p></section></body></html>`
	tasks := func(statuses ...string) map[string]any {
		steps := []string{"Outline the deck", "Write and check the slides", "Export a PDF"}
		items := make([]map[string]string, len(steps))
		for i, s := range steps {
			items[i] = map[string]string{"text": s, "status": statuses[i]}
		}
		return map[string]any{"items": items}
	}
	call := func(id, name string, args any) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call(id, name, args)}}
	}
	// The artifact's ID is the server's to choose: each step reads it
	// from the results the model has seen, as a model would.
	steps := []func(id string) llmtest.Reply{
		func(string) llmtest.Reply {
			return call("c1", "update_tasks", tasks("in_progress", "pending", "pending"))
		},
		func(string) llmtest.Reply {
			return call("c2", "update_tasks", tasks("completed", "in_progress", "pending"))
		},
		func(string) llmtest.Reply {
			return call("c3", "create_artifact", map[string]string{"title": "Q3 review", "kind": "html", "content": deck})
		},
		func(id string) llmtest.Reply { return call("c4", "inspect_artifact", map[string]any{"id": id}) },
		func(id string) llmtest.Reply {
			return call("c5", "update_artifact", map[string]any{"id": id, "edits": []map[string]string{
				{"old_string": `<img src="https://cdn.example.com/logo.png">`, "new_string": `<p>Acme</p>`}}})
		},
		func(id string) llmtest.Reply { return call("c6", "save_artifact", map[string]string{"id": id}) },
		func(id string) llmtest.Reply {
			return call("c7", "inspect_artifact", map[string]any{"id": id, "viewports": []map[string]int{{"width": 1280, "height": 720}}})
		},
		func(id string) llmtest.Reply { return call("c8", "save_artifact", map[string]string{"id": id}) },
		func(id string) llmtest.Reply {
			return call("c9", "print_pdf", map[string]string{"id": id, "path": "decks/q3.pdf"})
		},
		func(string) llmtest.Reply {
			return call("c10", "update_tasks", tasks("completed", "completed", "completed"))
		},
		func(string) llmtest.Reply {
			return llmtest.Reply{Text: []string{"The deck is ready, with a PDF in decks/q3.pdf."}}
		},
	}
	artID := regexp.MustCompile(`art_[0-9a-f]+`)
	var mu sync.Mutex
	step := 0
	srv := llmtest.StartFunc(t, llmtest.OpenAI{}, func(req llm.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		id := ""
		for _, m := range req.Messages {
			for _, r := range m.Results {
				if found := artID.FindString(r.Content); found != "" {
					id = found
				}
			}
		}
		if step >= len(steps) {
			return llmtest.Reply{Text: []string{"(past the script)"}}
		}
		step++
		return steps[step-1](id)
	})
	data, dir := t.TempDir(), t.TempDir()
	agentPath := filepath.Join(dir, "slides.yaml")
	agent := "name: slides\nmodel: openai:gpt-4.1\ncapabilities: {tools: true, vision: true}\nprompt: You make slide decks.\ntools: [artifacts, checklist]\n"
	if err := os.WriteFile(agentPath, []byte(agent), 0o600); err != nil {
		t.Fatal(err)
	}
	chat := chatEnv(t, data, srv, "")
	code, out, stderr := chat("chat", "--agent", agentPath, "--conversation", "deck", "--json", "Make me a two-slide Q3 review deck and a PDF of it")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	seen := srv.Seen()
	if len(seen) != 11 {
		t.Fatalf("%d model calls, want 11", len(seen))
	}
	results := map[string]string{}
	for _, ev := range events(t, out) {
		if ev["type"] == "tool_result" {
			r, _ := ev["result"].(map[string]any)
			id, _ := r["call_id"].(string)
			content, _ := r["content"].(string)
			results[id] = content
		}
	}
	for id, want := range map[string]string{
		"c3": "draft 1, not inspected yet",
		"c4": "blocked load: https://cdn.example.com/logo.png",
		"c6": "call inspect_artifact first",
		"c7": "No console errors or blocked loads",
		"c8": "saved as version 1",
		"c9": "decks/q3.pdf",
	} {
		if !strings.Contains(results[id], want) {
			t.Errorf("result of %s = %q, want it to say %q", id, results[id], want)
		}
	}
	// The inspection's screenshot went to the model after that step.
	images := 0
	for _, m := range seen[4].Req.Messages {
		for _, r := range m.Results {
			images += len(r.Images)
		}
	}
	if images != 1 {
		t.Errorf("the step after inspect_artifact carried %d images, want the one screenshot", images)
	}
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.ListArtifacts(context.Background(), "default", "deck")
	if err != nil || len(list) != 1 {
		t.Fatalf("artifacts: %+v, %v", list, err)
	}
	v, err := st.GetArtifactVersion(context.Background(), "default", "deck", list[0].ID, 1)
	if err != nil || !v.Checked || strings.Contains(v.Content, "cdn.example.com") || v.Change != store.ArtifactCreate {
		t.Errorf("version 1: %+v, %v; want the checked, fixed deck", v, err)
	}
	if _, err := st.GetArtifactVersion(context.Background(), "default", "deck", list[0].ID, 2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a second version exists: %v", err)
	}
	pdfs, _ := filepath.Glob(filepath.Join(data, "workspaces", "*", "*", "decks", "q3.pdf"))
	if len(pdfs) != 1 {
		t.Fatalf("PDFs in the workspace: %v", pdfs)
	}
	if b, err := os.ReadFile(pdfs[0]); err != nil || !strings.HasPrefix(string(b), "%PDF-") {
		t.Errorf("%s is not a PDF: %v", pdfs[0], err)
	}
}
