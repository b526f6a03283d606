package archive_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/keyring"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
)

// base is the fixtures' clock: microseconds, which both backends keep.
var base = time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)

// at is base plus n seconds.
func at(n int) time.Time { return base.Add(time.Duration(n) * time.Second) }

// Fixture values the round trip checks after each import.
const (
	org        = "acme"
	apiToken   = "qv_api_token_of_ana"
	mcpToken   = "mcp-bearer-token"
	settingKey = "sk-openai-key"
	conv       = "c1"
)

// weirdContent holds a NUL and invalid UTF-8, which PostgreSQL's text
// refuses: message content and result bodies are bytes.
const weirdContent = "nul\x00 and invalid \xff\xfe utf-8"

// hash is a credential's stored form.
func hash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// testKeyring is a keyring with one key named id.
func testKeyring(t *testing.T, id string, b byte) *secret.Keyring {
	t.Helper()
	key := make([]byte, 32)
	for i := range key {
		key[i] = b
	}
	kr, err := secret.New(secret.Key{ID: id, Secret: key})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// fill writes every kind of record through the repositories, with
// secrets sealed by kr and the keyring check stored (keyring.Check).
func fill(ctx context.Context, t *testing.T, st store.Store, kr *secret.Keyring) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.CreateOrg(ctx, store.Org{ID: org, Name: "Acme Corp", CreatedAt: at(0)}))
	must(st.CreateOrg(ctx, store.Org{ID: "zeta", Name: "Zeta", CreatedAt: at(1)}))
	must(st.CreateUser(ctx, store.User{ID: "ana", OrgID: org, DisplayName: "Ana Lima", Department: "Finance", Timezone: "Asia/Ho_Chi_Minh",
		Role: store.RoleAdmin, CreatedAt: at(2), UpdatedAt: at(3)},
		store.Credential{Hash: hash(apiToken), Kind: store.CredAPIToken, OrgID: org, UserID: "ana", Label: "laptop", CreatedAt: at(4)},
		store.Credential{Hash: hash("session"), Kind: store.CredSession, OrgID: org, UserID: "ana", CSRF: "csrf-1", CreatedAt: at(4), ExpiresAt: at(100000)}))
	must(st.CreateUser(ctx, store.User{ID: "bo", OrgID: org, DisplayName: "Bo", Role: store.RoleMember, CreatedAt: at(5), UpdatedAt: at(5), DisabledAt: at(6)}))
	must(st.PutAgent(ctx, store.StoredAgent{OrgID: org, Name: "helper", Definition: []byte("name: helper\nmodel: x\n"), CreatedAt: at(7), UpdatedAt: at(8)}))

	sealed, err := kr.Seal([]byte(settingKey), settings.SecretAAD(org, "openai"))
	must(err)
	_, err = st.PutOrgSettings(ctx, store.OrgSettings{OrgID: org, Doc: []byte(`{"models":["x"]}`), Secrets: map[string]string{"openai": sealed}, UpdatedAt: at(9)})
	must(err)

	must(st.PutConversation(ctx, store.Conversation{ID: conv, OrgID: org, UserID: "ana", Agent: "helper", Title: "Budget", Model: "openai:y", CreatedAt: at(10), UpdatedAt: at(20)}))
	must(st.PutTurn(ctx, store.Turn{ID: "t1", OrgID: org, UserID: "ana", ConversationID: conv, Agent: "helper", Model: "openai:x", Timezone: "UTC",
		Payer: "ana", Tools: []string{"calculate", "read_file"}, Excluded: []store.Exclusion{{Name: "fetch_url", Reason: "switch off \x00 quoted"}},
		Declared: []store.Exclusion{{Name: "calculate", Reason: "always on"}}, Selected: 7, Status: store.TurnDone, Question: "Which year?",
		Suggested: "Show 2025", Steps: 2, StartedAt: at(11), EndedAt: at(12)}))
	must(st.PutTurn(ctx, store.Turn{ID: "t2", OrgID: org, UserID: "ana", ConversationID: conv, Agent: "helper", Tools: nil,
		Status: store.TurnRunning, StartedAt: at(13)}))
	_, err = st.AppendMessages(ctx, org, []store.Message{
		{ConversationID: conv, TurnID: "t1", Role: "user", Content: "What is 17.5% of 2340?", CreatedAt: at(11)},
		{ConversationID: conv, TurnID: "t1", Role: "tool_call", Content: `{"expression":"x"}`, ToolName: "calculate", ToolCallID: "call-1", CreatedAt: at(11)},
		{ConversationID: conv, TurnID: "t1", Role: "tool_result", Content: weirdContent, ToolName: "calculate", ToolCallID: "call-1", Ref: "r1", IsError: true, CreatedAt: at(12)},
		{ConversationID: conv, TurnID: "t1", Role: "assistant", Content: "409.5", CreatedAt: at(12)},
	})
	must(err)
	// Marks: a reaction and a pin on the question, the answer edited
	// (to its own text) and a thread started from it.
	must(st.AddReaction(ctx, store.Reaction{OrgID: org, ConversationID: conv, Seq: 1, Emoji: "👍", Actor: store.ActorAgent, CreatedAt: at(12)}))
	must(st.PinMessage(ctx, store.Pin{OrgID: org, ConversationID: conv, Seq: 1, PinnedBy: "ana", PinnedAt: at(12)}))
	must(st.EditMessage(ctx, store.MessageEdit{OrgID: org, ConversationID: conv, Seq: 4, Text: "409.5", At: at(12)}))
	_, err = st.CreateThread(ctx, store.NewThread{
		Conversation: store.Conversation{ID: "thread-1", OrgID: org, UserID: "ana", Agent: "helper", Title: "Percentages", CreatedAt: at(13), UpdatedAt: at(13)},
		ParentID:     conv, ParentSeq: 4,
		First: store.Message{ConversationID: "thread-1", Role: "assistant", Content: "Let's go through it.", CreatedAt: at(13)},
	})
	must(err)
	must(st.PutResult(ctx, store.Result{Ref: "r1", OrgID: org, ConversationID: conv, TurnID: "t1", Tool: "calculate", Body: weirdContent, CreatedAt: at(12)}, store.ResultQuota{}))
	for step := range 3 {
		must(st.PutUsage(ctx, store.Usage{OrgID: org, ConversationID: conv, TurnID: "t1", Payer: "ana", Model: "openai:x", Step: step,
			InputTokens: 100, CachedInputTokens: 10, CacheWriteTokens: 5, OutputTokens: int64(7 + step), CostMicros: 1234, CreatedAt: at(12)}))
	}

	tok, err := kr.Seal([]byte(mcpToken), mcpclient.TokenAAD(org, "m1"))
	must(err)
	must(st.CreateMCPServer(ctx, store.MCPServer{ID: "m1", OrgID: org, Name: "docs", URL: "https://mcp.example/", Token: tok, Type: store.MCPGeneral,
		Enabled: true, CreatedAt: at(14), UpdatedAt: at(14)}, 10))
	must(st.CreateMCPServer(ctx, store.MCPServer{ID: "m2", OrgID: org, Name: "empty", URL: "https://mcp2.example/", Type: store.MCPGeneral,
		CreatedAt: at(14), UpdatedAt: at(14)}, 10))
	_, err = st.SetMCPServerTools(ctx, org, "m2", []string{}, at(15))
	must(err)

	must(st.PutIntentSettings(ctx, store.IntentSettings{OrgID: org, Enabled: true, HistoryTurns: 3, GateAlwaysOn: true, UpdatedAt: at(16)}))
	must(st.AddIntentTrigger(ctx, store.IntentTrigger{OrgID: org, Target: "web", Phrase: "tìm trên mạng", CreatedAt: at(16)}, 50))
	must(st.AddIntentTrigger(ctx, store.IntentTrigger{OrgID: org, Target: "web", Phrase: "look it up", CreatedAt: at(17)}, 50))
	must(st.SetUserIntentMode(ctx, org, "ana", "on"))
	_, err = st.OpenIntentTargets(ctx, org, conv, []string{"web", "files"})
	must(err)

	blob := make([]byte, 1000)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	_, err = st.PutBlob(ctx, store.Blob{OrgID: org, ID: "b1", OwnerID: "ana", ConversationID: conv, Name: "chart.png", MediaType: "image/png",
		CreatedAt: at(18), Data: blob}, store.BlobQuota{})
	must(err)
	_, err = st.PutBlob(ctx, store.Blob{OrgID: org, ID: "b0", OwnerID: "ana", Name: "empty.txt", MediaType: "text/plain", CreatedAt: at(18), Data: []byte{}}, store.BlobQuota{})
	must(err)

	for _, m := range []store.Memory{
		{OrgID: org, ID: "m1", OwnerID: "ana", Text: "Ana prefers tea to coffee", CreatedAt: at(19)},
		{OrgID: org, ID: "m2", Text: "Văn phòng đóng cửa lúc 18 giờ", CreatedAt: at(20)},
	} {
		m.Model = embed.Local{}.Model().String()
		v, err := embed.Local{}.Embed(ctx, []string{m.Text}, embed.Document)
		must(err)
		m.Vector = embed.Pack(v[0])
		_, err = st.PutMemory(ctx, m, 0)
		must(err)
	}

	_, err = st.PutSkill(ctx, store.Skill{OrgID: org, Name: "pdf", Description: "Fill PDF forms.",
		Document:  "---\nname: pdf\ndescription: Fill PDF forms.\n---\nRead forms.md first.\n",
		Files:     []store.SkillFile{{Path: "forms.md", Data: []byte("# Forms")}, {Path: "scripts/logo.bin", Data: []byte(weirdContent)}},
		CreatedAt: at(21), UpdatedAt: at(21)})
	must(err)
	must(st.AttachSkill(ctx, org, "helper", "pdf", at(22)))

	// Transient records, which an archive leaves out.
	_, err = st.ClaimRun(ctx, store.Run{OrgID: org, ConversationID: conv, TurnID: "t2", UserID: "ana", Replica: "r-1", StartedAt: at(13), ExpiresAt: at(60)})
	must(err)
	must(st.AppendTurnEvents(ctx, org, conv, "t2", []store.TurnEvent{{Seq: 1, Kind: "text", Data: []byte(`{"text":"hi"}`), CreatedAt: at(13)}}))

	must(keyring.Check(ctx, st, kr))
}

// fillWorkspaces writes workspaces into the data folder dir: files in
// folders, an empty folder, and what an archive leaves out (a symbolic
// link, a lock file, a hard link).
func fillWorkspaces(t *testing.T, dir string) {
	t.Helper()
	ws := filepath.Join(dir, "workspaces", org)
	files := map[string]string{
		"ana/notes/todo.md": "buy milk\n",
		"ana/report.csv":    "a,b\n1,2\n",
		"bo/x.bin":          "\x00\x01\x02",
	}
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at(30), at(30)); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []error{
		os.MkdirAll(filepath.Join(ws, "ana", "empty"), 0o700),
		os.WriteFile(filepath.Join(ws, "ana", ".quiver-lock"), nil, 0o600),
		os.Symlink("/etc/passwd", filepath.Join(ws, "ana", "passwd")),
		os.WriteFile(filepath.Join(ws, "bo", "linked.bin"), []byte("two names"), 0o600),
		os.Link(filepath.Join(ws, "bo", "linked.bin"), filepath.Join(ws, "bo", "linked-too.bin")),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
}
