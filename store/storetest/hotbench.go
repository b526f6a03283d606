package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// hotConversations and hotCredentials are how many of each the lookups
// of BenchmarkHotOps choose among; hotTranscript is the length, in
// 512-byte messages, of the transcript it lists.
const (
	hotConversations = 1000
	hotCredentials   = 1000
	hotTranscript    = 100
)

// BenchmarkHotOps measures the store calls every turn makes, as b's
// sub-benchmarks, each call timed on its own so that besides ns/op each
// reports its latency's p50 and p99 (p50-us, p99-us):
//
//   - GetConversation: one of 1000 conversations;
//   - ListMessages100: a transcript of 100 messages of 512 bytes, as a
//     turn's collect reads it;
//   - AppendMessage: one 512-byte message;
//   - AppendMessages5: a model step's five messages in one batch;
//   - PutTurn: a turn recorded at its start, then again at its end;
//   - StepSeparate: a model step's records as three writes (its reply's
//     two messages, the usage, the turn), as a turn wrote them before
//     TurnWriter;
//   - StepWriteTurn: the same records in one WriteTurn;
//   - GetOrgSettings: an organisation's saved settings and two sealed keys;
//   - LookupCredential: one of 1000 API tokens, as every request's
//     authentication does;
//   - AppendTurnEvents4: a batch of four coalesced events;
//   - RenewRuns10: a replica's heartbeat over its 10 running turns.
//
// Calls are made one at a time: the latency of one call on an idle
// store, which is what a turn waits for. Each sub-benchmark uses
// identifiers of its own, so s may hold other data and -count may
// repeat them.
func BenchmarkHotOps(b *testing.B, s store.Store) {
	for _, op := range []struct {
		name  string
		setup func(b *testing.B, f *fixture) func(i int) error
	}{
		{"GetConversation", hotGetConversation},
		{"ListMessages100", hotListMessages},
		{"AppendMessage", hotAppendMessage},
		{"AppendMessages5", hotAppendMessages},
		{"PutTurn", hotPutTurn},
		{"StepSeparate", hotStepSeparate},
		{"StepWriteTurn", hotStepWriteTurn},
		{"GetOrgSettings", hotGetOrgSettings},
		{"LookupCredential", hotLookupCredential},
		{"AppendTurnEvents4", hotAppendTurnEvents},
		{"RenewRuns10", hotRenewRuns},
	} {
		b.Run(op.name, func(b *testing.B) {
			f := benchIDs()
			f.Store = s
			timedLoop(b, op.setup(b, f))
		})
	}
}

// timedLoop runs op once per iteration of b.Loop, timing each call, and
// reports the calls' p50 and p99 in microseconds.
func timedLoop(b *testing.B, op func(i int) error) {
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		err := op(i)
		took = append(took, time.Since(start))
		if err != nil {
			b.Fatalf("call %d: %v", i, err)
		}
		i++
	}
	slices.Sort(took)
	rank := func(p float64) float64 {
		return float64(took[max(0, int(math.Ceil(p*float64(len(took))))-1)].Nanoseconds()) / 1000
	}
	b.ReportMetric(rank(0.50), "p50-us")
	b.ReportMetric(rank(0.99), "p99-us")
}

// hotOrg creates the fixture's organisation and a member, for the calls
// whose records a store may tie to them.
func hotOrg(b *testing.B, f *fixture) (org, user string) {
	org, user = f.id("org"), f.id("user")
	if err := f.CreateOrg(b.Context(), store.Org{ID: org, Name: "Bench", CreatedAt: benchStart}); err != nil {
		b.Fatal(err)
	}
	u := store.User{ID: user, OrgID: org, DisplayName: "Bench", Role: store.RoleMember, CreatedAt: benchStart, UpdatedAt: benchStart}
	if err := f.CreateUser(b.Context(), u); err != nil {
		b.Fatal(err)
	}
	return org, user
}

func hotGetConversation(b *testing.B, f *fixture) func(int) error {
	org, user := hotOrg(b, f)
	for i := range hotConversations {
		c := store.Conversation{ID: fmt.Sprintf("conv-%04d", i), OrgID: org, UserID: user, Agent: "assistant",
			Title: "Flights to Hanoi", CreatedAt: benchStart, UpdatedAt: benchStart}
		if err := f.PutConversation(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
	return func(i int) error {
		_, err := f.GetConversation(b.Context(), org, fmt.Sprintf("conv-%04d", (i*7919)%hotConversations))
		return err
	}
}

// hotMessage is a 512-byte message of conv.
func hotMessage(conv, role string) store.Message {
	return store.Message{ConversationID: conv, TurnID: "turn", Role: role, Content: strings.Repeat("m", 512), CreatedAt: benchStart}
}

func hotListMessages(b *testing.B, f *fixture) func(int) error {
	org, conv := f.id("org"), f.id("conv")
	ms := make([]store.Message, hotTranscript)
	for i := range ms {
		ms[i] = hotMessage(conv, "user")
	}
	if _, err := f.AppendMessages(b.Context(), org, ms); err != nil {
		b.Fatal(err)
	}
	return func(int) error {
		got, err := f.ListMessages(b.Context(), org, conv, 0)
		if err == nil && len(got) != hotTranscript {
			err = fmt.Errorf("ListMessages: %d messages, want %d", len(got), hotTranscript)
		}
		return err
	}
}

func hotAppendMessage(b *testing.B, f *fixture) func(int) error {
	org, conv := f.id("org"), f.id("conv")
	return func(int) error {
		_, err := f.AppendMessage(b.Context(), org, hotMessage(conv, "assistant"))
		return err
	}
}

func hotAppendMessages(b *testing.B, f *fixture) func(int) error {
	org, conv := f.id("org"), f.id("conv")
	step := []store.Message{hotMessage(conv, "assistant"), hotMessage(conv, "tool_call"), hotMessage(conv, "tool_call"),
		hotMessage(conv, "tool"), hotMessage(conv, "tool")}
	return func(int) error {
		_, err := f.AppendMessages(b.Context(), org, step)
		return err
	}
}

func hotPutTurn(b *testing.B, f *fixture) func(int) error {
	org, user := hotOrg(b, f)
	tools := []string{"calculate", "read_tool_result", "read_transcript", "ask_clarifying_question", "suggest_next_actions",
		"list_files", "search_files", "read_file", "write_file", "edit_file", "delete_file", "web_search", "fetch_url"}
	excluded := []store.Exclusion{{Name: "research_web", Reason: "not in the agent's allowlist"},
		{Name: "generate_image", Reason: "no image backend configured"}}
	return func(i int) error {
		t := store.Turn{ID: fmt.Sprintf("turn-%d", i/2), OrgID: org, UserID: user, ConversationID: "conv", Agent: "assistant",
			Model: "openai:gpt-4.1-mini", Timezone: "Asia/Ho_Chi_Minh", Tools: tools, Excluded: excluded,
			Selected: len(tools), Status: store.TurnRunning, StartedAt: benchStart}
		if i%2 == 1 { // the same turn, ended
			t.Status, t.Steps, t.EndedAt = store.TurnDone, 2, benchStart.Add(3*time.Second)
		}
		return f.PutTurn(b.Context(), t)
	}
}

// hotStep is a model step's records: its reply (two messages), the
// call's usage and the turn with step i.
func hotStep(f *fixture, org, user string, i int) ([]store.Message, store.Usage, store.Turn) {
	conv := f.id("conv")
	ms := []store.Message{hotMessage(conv, "assistant"), hotMessage(conv, "tool_call")}
	u := store.Usage{OrgID: org, ConversationID: conv, TurnID: "turn", Payer: org, Model: "openai:gpt-4.1-mini",
		Step: i + 1, InputTokens: 1200, OutputTokens: 40, CreatedAt: benchStart}
	t := store.Turn{ID: "turn", OrgID: org, UserID: user, ConversationID: conv, Agent: "assistant",
		Model: "openai:gpt-4.1-mini", Tools: []string{"calculate", "read_file"}, Excluded: []store.Exclusion{},
		Selected: 2, Status: store.TurnRunning, Steps: i + 1, StartedAt: benchStart}
	return ms, u, t
}

func hotStepSeparate(b *testing.B, f *fixture) func(int) error {
	org, user := hotOrg(b, f)
	return func(i int) error {
		ms, u, t := hotStep(f, org, user, i)
		if _, err := f.AppendMessages(b.Context(), org, ms); err != nil {
			return err
		}
		if err := f.PutUsage(b.Context(), u); err != nil {
			return err
		}
		return f.PutTurn(b.Context(), t)
	}
}

func hotStepWriteTurn(b *testing.B, f *fixture) func(int) error {
	org, user := hotOrg(b, f)
	return func(i int) error {
		ms, u, t := hotStep(f, org, user, i)
		_, err := f.WriteTurn(b.Context(), org, store.TurnWrite{Turn: &t, Messages: ms, Usage: &u})
		return err
	}
}

func hotGetOrgSettings(b *testing.B, f *fixture) func(int) error {
	org, _ := hotOrg(b, f)
	doc := []byte(`{"network_mode":"public","switches":{"emoji_usage":true,"time_awareness":true},"web":{"exclude_providers":["duckduckgo"]}}`)
	secrets := map[string]string{"openai_api_key": strings.Repeat("s", 120), "brave_api_key": strings.Repeat("t", 120)}
	if _, err := f.PutOrgSettings(b.Context(), store.OrgSettings{OrgID: org, Doc: doc, Secrets: secrets, UpdatedAt: benchStart}); err != nil {
		b.Fatal(err)
	}
	return func(int) error {
		st, err := f.GetOrgSettings(b.Context(), org)
		if err == nil && st.Version != 1 {
			err = fmt.Errorf("GetOrgSettings: version %d, want 1", st.Version)
		}
		return err
	}
}

// hotHash is the hash of API token i.
func hotHash(f *fixture, i int) string {
	sum := sha256.Sum256([]byte(f.id(fmt.Sprint("token-", i))))
	return hex.EncodeToString(sum[:])
}

func hotLookupCredential(b *testing.B, f *fixture) func(int) error {
	org, user := hotOrg(b, f)
	for i := range hotCredentials {
		c := store.Credential{Hash: hotHash(f, i), Kind: store.CredAPIToken, OrgID: org, UserID: user, Label: "bench", CreatedAt: benchStart}
		if err := f.PutCredential(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
	now := benchStart.Add(time.Hour)
	return func(i int) error {
		_, err := f.LookupCredential(b.Context(), store.CredAPIToken, hotHash(f, (i*7919)%hotCredentials), now)
		return err
	}
}

func hotAppendTurnEvents(b *testing.B, f *fixture) func(int) error {
	org, conv, turn := f.id("org"), f.id("conv"), f.id("turn")
	return func(i int) error {
		return f.AppendTurnEvents(b.Context(), org, conv, turn, benchEvents(int64(i)*4+1, 4))
	}
}

func hotRenewRuns(b *testing.B, f *fixture) func(int) error {
	for i := range 10 {
		r := store.Run{OrgID: f.id("org"), ConversationID: f.id(fmt.Sprint("conv-", i)), TurnID: f.id(fmt.Sprint("turn-", i)),
			UserID: f.id("user"), Replica: f.id("replica"), StartedAt: benchStart, ExpiresAt: benchStart.Add(time.Hour)}
		if _, err := f.ClaimRun(b.Context(), r); err != nil {
			b.Fatal(err)
		}
	}
	return func(i int) error {
		now := benchStart.Add(time.Duration(i) * time.Millisecond)
		runs, err := f.RenewRuns(b.Context(), f.id("replica"), now, now.Add(time.Hour))
		if err == nil && len(runs) != 10 {
			err = fmt.Errorf("RenewRuns: %d runs, want 10", len(runs))
		}
		return err
	}
}
