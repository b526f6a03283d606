package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/builtin/memory"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

var (
	ana  = tool.Scope{OrgID: "o1", UserID: "ana", ConversationID: "c1", TurnID: "t1"}
	binh = tool.Scope{OrgID: "o1", UserID: "binh", ConversationID: "c2", TurnID: "t2"}
	// other is a person of another organisation.
	other = tool.Scope{OrgID: "o2", UserID: "ana", ConversationID: "c3", TurnID: "t3"}
)

// kit is the tools over one SQLite store, by name.
type kit struct {
	st    store.Store
	tools map[string]*tool.Tool
}

func newKit(t *testing.T, wrap func(store.Memories) store.Memories) *kit {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var mem store.Memories = st
	if wrap != nil {
		mem = wrap(st)
	}
	k := &kit{st: st, tools: map[string]*tool.Tool{}}
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, tl := range memory.Tools(memory.Config{Memories: mem, ShortTerms: st, Embeddings: embed.Fixed{E: embed.Local{}},
		Now: func() time.Time { return clock }, NewID: (&ids.Sequence{}).New}) {
		k.tools[tl.Name()] = tl
	}
	return k
}

// call runs a tool and returns its text and whether it failed (an error
// for the model); an infrastructure error fails the test.
func (k *kit) call(t *testing.T, name string, s tool.Scope, args any) (string, bool) {
	t.Helper()
	b, _ := json.Marshal(args)
	res, err := k.tools[name].Run(context.Background(), s, b)
	switch {
	case err != nil && tool.IsInfra(err):
		t.Fatalf("%s: infrastructure error: %v", name, err)
	case err != nil:
		return err.Error(), true
	}
	return res.Content, false
}

// must runs a tool that must succeed.
func (k *kit) must(t *testing.T, name string, s tool.Scope, args any) string {
	t.Helper()
	out, failed := k.call(t, name, s, args)
	if failed {
		t.Fatalf("%s(%v): %s", name, args, out)
	}
	return out
}

var memID = regexp.MustCompile(`mem_[0-9a-z_]+`)

// saved saves text and returns the new memory's id.
func (k *kit) saved(t *testing.T, s tool.Scope, text string) string {
	t.Helper()
	out := k.must(t, "save_memory", s, map[string]string{"text": text})
	id := memID.FindString(out)
	if id == "" {
		t.Fatalf("save_memory answered %q, with no id", out)
	}
	return id
}

func TestSaveSearchUpdateForget(t *testing.T) {
	k := newKit(t, nil)
	tea := k.saved(t, ana, "Ana prefers green tea over coffee.")
	k.saved(t, ana, "Ana works at the Hà Nội office.")
	out := k.must(t, "search_memory", ana, map[string]string{"query": "what does ana drink? tea"})
	if !strings.Contains(out, tea) || !strings.Contains(out, "personal") {
		t.Fatalf("search_memory = %q, want %s (personal)", out, tea)
	}
	if first := memID.FindString(out); first != tea {
		t.Errorf("search_memory ranks %s first, want %s:\n%s", first, tea, out)
	}
	for _, s := range []tool.Scope{binh, other} {
		if out := k.must(t, "search_memory", s, map[string]string{"query": "tea coffee Ana"}); strings.Contains(out, "mem_") {
			t.Errorf("%s/%s finds ana's memory: %q", s.OrgID, s.UserID, out)
		}
		if out, failed := k.call(t, "update_memory", s, map[string]string{"id": tea, "text": "hijacked"}); !failed || !strings.Contains(out, "no memory") {
			t.Errorf("%s/%s update_memory of ana's = %q, want not found", s.OrgID, s.UserID, out)
		}
		if out, failed := k.call(t, "forget_memory", s, map[string]string{"id": tea}); !failed || !strings.Contains(out, "no memory") {
			t.Errorf("%s/%s forget_memory of ana's = %q, want not found", s.OrgID, s.UserID, out)
		}
	}
	k.must(t, "update_memory", ana, map[string]string{"id": tea, "text": "Ana now drinks black coffee."})
	if out := k.must(t, "search_memory", ana, map[string]string{"query": "coffee"}); !strings.Contains(out, "black coffee") {
		t.Errorf("after update_memory, search_memory = %q", out)
	}
	k.must(t, "forget_memory", ana, map[string]string{"id": tea})
	if out := k.must(t, "search_memory", ana, map[string]string{"query": "black coffee"}); strings.Contains(out, tea) {
		t.Errorf("after forget_memory, search_memory = %q", out)
	}
	if out, failed := k.call(t, "forget_memory", ana, map[string]string{"id": tea}); !failed {
		t.Errorf("forget_memory twice = %q, want not found", out)
	}
}

func TestSharedMemory(t *testing.T) {
	k := newKit(t, nil)
	sharedAna := ana
	sharedAna.SharedMemory = true
	id := k.saved(t, sharedAna, "The team stand-up is at 9:30 every weekday.")
	out := k.must(t, "search_memory", binh, map[string]string{"query": "when is the stand-up"})
	if !strings.Contains(out, id) || !strings.Contains(out, "shared") {
		t.Errorf("another person of the organisation: search_memory = %q, want shared %s", out, id)
	}
	if out := k.must(t, "search_memory", other, map[string]string{"query": "stand-up weekday"}); strings.Contains(out, id) {
		t.Errorf("another organisation sees the shared memory: %q", out)
	}
	// Without shared_memory a person reads the shared memory but cannot change it.
	if out, failed := k.call(t, "forget_memory", binh, map[string]string{"id": id}); !failed {
		t.Errorf("forget_memory of a shared memory without shared_memory = %q, want not found", out)
	}
	sharedBinh := binh
	sharedBinh.SharedMemory = true
	k.must(t, "update_memory", sharedBinh, map[string]string{"id": id, "text": "The team stand-up is at 10:00 every weekday."})
	k.must(t, "forget_memory", sharedBinh, map[string]string{"id": id})
	if n, _ := k.st.CountMemories(context.Background(), "o1", ""); n != 0 {
		t.Errorf("%d shared memories after forget_memory, want 0", n)
	}
}

func TestDuplicateOnSave(t *testing.T) {
	k := newKit(t, nil)
	id := k.saved(t, ana, "The user's daughter is called Linh.")
	for _, text := range []string{
		"the user's daughter is called linh", // same normalised text
		"The user’s daughter is named Linh.", // near duplicate
	} {
		out, failed := k.call(t, "save_memory", ana, map[string]string{"text": text})
		if !failed || !strings.Contains(out, id) || !strings.Contains(out, "update_memory") {
			t.Errorf("save_memory(%q) = %q, want a refusal naming %s and update_memory", text, out, id)
		}
	}
	k.saved(t, ana, "The user's son is called Minh.") // another fact
	// Another person saving the same text keeps their own.
	k.saved(t, binh, "The user's daughter is called Linh.")
	if n, _ := k.st.CountMemories(context.Background(), "o1", "ana"); n != 2 {
		t.Errorf("ana holds %d memories, want 2", n)
	}
}

// TestDuplicateThreshold measures memory.DuplicateCosine on the local
// embedder: reworded copies of a fact score at or over it, other facts
// under it.
func TestDuplicateThreshold(t *testing.T) {
	cos := func(a, b string) float32 {
		v, err := embed.Local{}.Embed(context.Background(), []string{a, b}, embed.Document)
		if err != nil {
			t.Fatal(err)
		}
		var c float32
		for i := range v[0] {
			c += v[0][i] * v[1][i]
		}
		return c
	}
	for _, p := range []struct {
		a, b string
		dup  bool
	}{
		{"Ana prefers tea over coffee.", "Ana prefers tea to coffee", true},
		{"Ana prefers tea over coffee.", "ana prefers teas over coffee!", true},
		{"The user's daughter is called Linh.", "The user's daughter is named Linh.", true},
		{"The project deadline is March 3.", "The project deadline is 3 March.", true},
		{"The user's daughter is called Linh.", "The user's son is called Minh.", false},
		{"The project deadline is March 3.", "The project budget is 5000 dollars.", false},
		{"Người dùng thích uống trà.", "Người dùng sống ở Hà Nội.", false},
		{"Ana prefers tea over coffee.", "Ana is allergic to peanuts.", false},
	} {
		c := cos(p.a, p.b)
		if got := c >= memory.DuplicateCosine; got != p.dup {
			t.Errorf("cosine(%q, %q) = %.3f: duplicate %v, want %v", p.a, p.b, c, got, p.dup)
		}
		if !p.dup && c >= memory.MinCosine && strings.Contains(p.b, "peanuts") {
			t.Errorf("cosine of unrelated facts %.3f is over MinCosine %.2f", c, memory.MinCosine)
		}
	}
}

func TestSearchLimits(t *testing.T) {
	k := newKit(t, nil)
	for _, text := range []string{
		"Project Apollo ships in May.", "The Borealis project lead is Minh.", "Project Cygnus uses PostgreSQL.",
		"Dorado project meetings are on Fridays.", "Project Eridanus was cancelled in 2024.", "The Fornax project has no budget yet.",
		"Project Gemini's repository moved to GitLab.", "Hydra project reviews need two approvers.", "Project Indus targets Vietnamese users.",
		"The Lyra project invoices go to finance.", "Project Mensa is Ana's favourite.", "Norma project docs live in the wiki.",
		"Project Orion's demo is on Tuesday.", "The Pavo project hired three interns.",
	} {
		k.saved(t, ana, text)
	}
	count := func(args map[string]any) int {
		return len(memID.FindAllString(k.must(t, "search_memory", ana, args), -1))
	}
	if n := count(map[string]any{"query": "project"}); n != memory.DefaultResults {
		t.Errorf("default search gives %d, want %d", n, memory.DefaultResults)
	}
	if n := count(map[string]any{"query": "project", "limit": memory.MaxResults}); n != memory.MaxResults {
		t.Errorf("limit %d gives %d", memory.MaxResults, n)
	}
	if out, failed := k.call(t, "search_memory", ana, map[string]any{"query": "project", "limit": 50}); !failed || strings.Contains(out, "mem_") {
		t.Errorf("limit 50 = %q, want refused (at most %d)", out, memory.MaxResults)
	}
	if out, failed := k.call(t, "search_memory", ana, map[string]any{"query": strings.Repeat("x", store.MaxMemoryQueryRunes+1)}); !failed {
		t.Errorf("an over-long query = %q, want refused", out)
	}
}

// quotaFull is a store at its cap.
type quotaFull struct{ store.Memories }

func (quotaFull) PutMemory(context.Context, store.Memory, int64) (store.Memory, error) {
	return store.Memory{}, fmt.Errorf("sqlite: put memory: the owner holds 10000 memories; the limit is 10000: %w", store.ErrMemoryQuota)
}

func TestStoreErrorsAreOneLine(t *testing.T) {
	k := newKit(t, func(m store.Memories) store.Memories { return quotaFull{m} })
	out, failed := k.call(t, "save_memory", ana, map[string]string{"text": "Something new."})
	if !failed || !strings.Contains(out, "memory is full") || strings.Contains(out, "\n") || strings.Contains(out, "sqlite") {
		t.Errorf("save at the quota = %q, want one line saying memory is full", out)
	}
	out, failed = k.call(t, "save_memory", ana, map[string]string{"text": strings.Repeat("word ", store.MaxMemoryRunes)})
	if !failed || !strings.Contains(out, "at most 2000") {
		t.Errorf("an over-long memory = %q, want refused with the limit", out)
	}
}

func TestRequires(t *testing.T) {
	byName := map[string]*tool.Tool{}
	for _, tl := range memory.Tools(memory.Config{}) {
		byName[tl.Name()] = tl
	}
	for _, c := range []struct {
		name     string
		switches map[string]bool
		backends []string
		want     string
	}{
		{"save_memory", nil, []string{"embedding"}, "memory switch off"},
		{"save_memory", map[string]bool{"memory": true}, nil, "no embedding model configured (embedding_model)"},
		{"search_memory", map[string]bool{"memory": true}, []string{"embedding"}, ""},
		{"forget_memory", map[string]bool{"self_teaching": true}, []string{"embedding"}, ""},
		{"update_short_term_memory", nil, nil, "memory switch off"},
		{"update_short_term_memory", map[string]bool{"memory": true}, nil, ""},
	} {
		got := byName[c.name].Spec().Requires(turn.Selection{Switches: c.switches, Backends: c.backends})
		if got != c.want {
			t.Errorf("%s with %v %v: %q, want %q", c.name, c.switches, c.backends, got, c.want)
		}
	}
}

func TestShortTerm(t *testing.T) {
	k := newKit(t, nil)
	ch := ana
	ch.ChannelID = "general"
	k.must(t, "update_short_term_memory", ch, map[string]string{"text": "Task: plan the offsite. Open: venue."})
	out, failed := k.call(t, "update_short_term_memory", ch, map[string]string{"text": strings.Repeat("é", store.MaxShortTermRunes+1)})
	if !failed || !strings.Contains(out, "4000") || strings.Contains(out, "\n") {
		t.Errorf("over the limit = %q, want one line refusing it", out)
	}
	m, err := k.st.GetShortTerm(context.Background(), "o1", "channel:general")
	if err != nil || m.Text != "Task: plan the offsite. Open: venue." {
		t.Errorf("the channel's memory after a refused write = %q, %v", m.Text, err)
	}
	if _, err := k.st.GetShortTerm(context.Background(), "o1", "conversation:c1"); err == nil {
		t.Error("a channel's memory was kept for the conversation")
	}
	k.must(t, "update_short_term_memory", ana, map[string]string{"text": "Working on the budget."})
	if m, err := k.st.GetShortTerm(context.Background(), "o1", "conversation:c1"); err != nil || m.Text != "Working on the budget." {
		t.Errorf("the conversation's memory = %q, %v", m.Text, err)
	}
	k.must(t, "update_short_term_memory", ana, map[string]string{"text": ""})
	if _, err := k.st.GetShortTerm(context.Background(), "o1", "conversation:c1"); err == nil {
		t.Error("an empty text left the memory")
	}
	if out, failed := k.call(t, "update_short_term_memory", tool.Scope{OrgID: "o1", UserID: "ana"}, map[string]string{"text": "x"}); !failed {
		t.Errorf("a turn with no conversation = %q, want refused", out)
	}
}

// TestNoPersonNoMemory: a call whose scope has no person is refused
// (an empty UserID would read as the organisation's shared owner), and
// nothing is stored; a personal save that the organisation's shared
// memory already holds says nothing needs saving, not to update a memory
// this person cannot change.
func TestNoPersonNoMemory(t *testing.T) {
	k := newKit(t, nil)
	nobody := ana
	nobody.UserID = ""
	b, _ := json.Marshal(map[string]string{"text": "The office closes at six."})
	if _, err := k.tools["save_memory"].Run(context.Background(), nobody, b); err == nil {
		t.Error("save_memory without a person was accepted")
	}
	if n, _ := k.st.CountMemories(context.Background(), ana.OrgID, ""); n != 0 {
		t.Errorf("%d shared memories after a save without a person, want 0", n)
	}
	sharedAna := ana
	sharedAna.SharedMemory = true
	k.saved(t, sharedAna, "The team stand-up is at 9:30 every weekday.")
	out, failed := k.call(t, "save_memory", binh, map[string]string{"text": "The team stand-up is at 9:30 every weekday."})
	if !failed || !strings.Contains(out, "nothing needs saving") || strings.Contains(out, "update_memory") {
		t.Errorf("a personal duplicate of a shared memory: %q", out)
	}
}
