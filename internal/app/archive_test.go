package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestExportImportSQLiteToPostgres moves a deployment with the commands:
// a conversation and a workspace file made on SQLite, "quiver export",
// then "quiver import" with $QUIVER_DATABASE_URL set, after which "quiver
// transcript" reads the conversation through PostgreSQL and the file is
// in the new data folder. An import with another keyring, and a second
// import, are refused.
func TestExportImportSQLiteToPostgres(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"It is ", "409.5."}}, llmtest.Reply{Text: []string{"On it."}})
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "sqlite"), filepath.Join(dir, "shared")
	cfgDir, otherDir := filepath.Join(dir, "cfg"), filepath.Join(dir, "other")
	for _, d := range []string{cfgDir, otherDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeConfig(t, cfgDir, "secrets:\n  key_file: "+writeKeyFile(t, cfgDir, "keys", "k1")+"\n")
	other := writeConfig(t, otherDir, "secrets:\n  key_file: "+writeKeyFile(t, otherDir, "keys", "k2")+"\n")
	model := map[string]string{"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": srv.URL}
	if code, _, stderr := runEnv(t, src, model, "", "chat", "--agent", agentFile, "--config", cfg, "--conversation", "conv-1", "What is 17.5% of 2340?"); code != 0 {
		t.Fatalf("chat: exit %d: %s", code, stderr)
	}
	write := `{"files":[{"path":"notes/plan.txt","content":"the plan"}]}`
	if code, _, stderr := runEnv(t, src, nil, "", "call", "write_file", "--agent", agentFile, "--config", cfg, "--args", write); code != 0 {
		t.Fatalf("write_file: exit %d: %s", code, stderr)
	}

	// The conversation's short-term memory travels with it.
	keeper := writeAgent(t, memoryAgent)
	note := `{"text":"Task: the 2340 budget. Open: the tax rate."}`
	if code, _, stderr := runEnv(t, src, nil, "", "call", "update_short_term_memory", "--agent", keeper, "--config", cfg, "--conversation", "conv-1", "--args", note); code != 0 {
		t.Fatalf("update_short_term_memory: exit %d: %s", code, stderr)
	}

	file := filepath.Join(dir, "deployment.tar.gz")
	code, out, stderr := runEnv(t, src, nil, "", "export", "--out", file, "--config", cfg)
	if code != 0 || !strings.Contains(out, "exported sqlite "+filepath.Join(src, "quiver.db")+" to "+file) || !strings.Contains(out, "workspaces: 1 files") {
		t.Fatalf("export: exit %d\n%s%s", code, out, stderr)
	}

	pg := map[string]string{"QUIVER_DATABASE_URL": pgtest.URL(t)}
	code, _, stderr = runEnv(t, dst, pg, "", "import", "--in", file, "--config", other)
	if code != 1 || !strings.Contains(stderr, "cannot open this database's secrets") {
		t.Fatalf("import with another keyring: exit %d, %q", code, stderr)
	}
	code, out, stderr = runEnv(t, dst, pg, "", "import", "--in", file, "--config", cfg)
	if code != 0 || !strings.Contains(out, "imported "+file+" into postgres postgres://") {
		t.Fatalf("import: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runEnv(t, dst, pg, "", "transcript", "conv-1", "--json")
	if code != 0 || !strings.Contains(out, `"content": "It is 409.5."`) || !strings.Contains(out, "What is 17.5% of 2340?") {
		t.Errorf("transcript through PostgreSQL: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := runEnv(t, dst, mergeVars(pg, model), "", "chat", "--agent", keeper, "--config", cfg, "--conversation", "conv-1", "Go on."); code != 0 {
		t.Fatalf("chat after the import: exit %d: %s", code, stderr)
	}
	shown := false
	if seen := srv.Seen(); len(seen) == 2 {
		for _, m := range seen[1].Req.Messages {
			shown = shown || strings.Contains(m.Text, "Short-term memory of this conversation") && strings.Contains(m.Text, "Task: the 2340 budget. Open: the tax rate.")
		}
	}
	if !shown {
		t.Errorf("the imported conversation's next turn does not show its short-term memory")
	}
	if b, err := os.ReadFile(filepath.Join(dst, "workspaces", "default", "cli", "notes", "plan.txt")); err != nil || string(b) != "the plan" {
		t.Errorf("the workspace file after the import: %q, %v", b, err)
	}
	if code, _, stderr := runEnv(t, dst, pg, "", "import", "--in", file, "--config", cfg); code != 1 || !strings.Contains(stderr, "is not empty; import only into a new") {
		t.Errorf("a second import: exit %d, %q", code, stderr)
	}
}

// TestArchiveUsageErrors: a missing file flag is bad input, written
// nowhere.
func TestArchiveUsageErrors(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for _, args := range [][]string{{"export"}, {"import"}, {"import", "--in", "a.tar", "extra"}, {"import", "--in", "a", "--gzip"}} {
		code, _, stderr := run(t, data, args...)
		if code != 2 || stderr == "" {
			t.Errorf("quiver %s: exit %d, %q", strings.Join(args, " "), code, stderr)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("a usage error created the data folder: %v", err)
	}
}

// mergeVars is a and b's variables together (b's win).
func mergeVars(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
