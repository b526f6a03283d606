package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/store"
)

// memoryCases checks the Memories repository.
func memoryCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testMemoryRoundTrip},
		{"Invalid", testMemoryInvalid},
		{"DuplicateID", testMemoryDuplicateID},
		{"Isolation", testMemoryIsolation},
		{"Update", testMemoryUpdate},
		{"Delete", testMemoryDelete},
		{"DeleteOwnerAndOrg", testMemoryDeleteOwnerAndOrg},
		{"ListOrderAndPaging", testMemoryList},
		{"SearchFolds", testMemorySearchFolds},
		{"SearchOwnerOnly", testMemorySearchOwnerOnly},
		{"SearchAnyInputIsSafe", testMemorySearchSafe},
		{"SearchBounds", testMemorySearchBounds},
		{"VectorsOfOneModel", testMemoryVectorsModel},
		{"VectorsFollowChanges", func(t *testing.T, f *fixture) { MemoryVectorsFollowChanges(t, f.Store, f.Store) }},
		{"Quota", testMemoryQuota},
		{"ConcurrentQuota", testMemoryConcurrentQuota},
	}
}

// localModel is the local embedder's model string, as memories record it.
var localModel = embed.Local{}.Model().String()

// newMemory returns a memory of the fixture's organisation "org", owned by
// owner ("" for shared), with text's local embedding.
func (f *fixture) newMemory(t testing.TB, id, owner, text string) store.Memory {
	t.Helper()
	return store.Memory{OrgID: f.id("org"), ID: f.id(id), OwnerID: owner, Text: text, CreatedAt: at(10),
		Model: localModel, Vector: localVector(t, text)}
}

// localVector is text's packed local embedding.
func localVector(t testing.TB, text string) embed.Packed {
	t.Helper()
	v, err := embed.Local{}.Embed(context.Background(), []string{text}, embed.Document)
	if err != nil {
		t.Fatal(err)
	}
	return embed.Pack(v[0])
}

// putMemory stores m and returns it as stored, failing the test on error.
func (f *fixture) putMemory(t testing.TB, m store.Memory) store.Memory {
	t.Helper()
	got, err := f.PutMemory(context.Background(), m, 0)
	if err != nil {
		t.Fatalf("PutMemory(%s): %v", m.ID, err)
	}
	return got
}

// searchIDs returns the IDs SearchMemories answers, failing on error.
func (f *fixture) searchIDs(t *testing.T, orgID, ownerID, text string) []string {
	t.Helper()
	got, err := f.SearchMemories(t.Context(), store.MemorySearch{OrgID: orgID, OwnerID: ownerID, Text: text})
	if err != nil {
		t.Fatalf("SearchMemories(%q): %v", text, err)
	}
	ids := []string{}
	for _, m := range got {
		if m.Vector != nil {
			t.Errorf("SearchMemories returned %s with its vector", m.ID)
		}
		ids = append(ids, m.ID)
	}
	return ids
}

// vectorIDs returns the IDs MemoryVectors answers, sorted.
func (f *fixture) vectorIDs(t *testing.T, orgID, ownerID, model string) []string {
	t.Helper()
	cs, err := f.MemoryVectors(t.Context(), orgID, ownerID, model)
	if err != nil {
		t.Fatalf("MemoryVectors: %v", err)
	}
	ids := []string{}
	for _, c := range cs {
		if err := c.Vector.Check(); err != nil {
			t.Errorf("vector of %s: %v", c.ID, err)
		}
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func testMemoryRoundTrip(t *testing.T, f *fixture) {
	ctx := t.Context()
	m := f.newMemory(t, "m", f.id("ana"), "Ana's daughter «Linh» starts school in September 🙂")
	got := f.putMemory(t, m)
	wantUTC(t, "PutMemory", got.CreatedAt, got.UpdatedAt)
	if !got.UpdatedAt.Equal(m.CreatedAt) || !got.CreatedAt.Equal(m.CreatedAt) {
		t.Errorf("times %v %v, want %v", got.CreatedAt, got.UpdatedAt, m.CreatedAt)
	}
	read, err := f.GetMemory(ctx, m.OrgID, m.OwnerID, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantUTC(t, "GetMemory", read.CreatedAt, read.UpdatedAt)
	want := m
	want.UpdatedAt = m.CreatedAt
	if d := diff(want, read); d != "" {
		t.Errorf("GetMemory (-want +got):\n%s", d)
	}
	if !bytes.Equal(read.Vector, m.Vector) {
		t.Error("the vector did not come back byte for byte")
	}
	if n, err := f.CountMemories(ctx, m.OrgID, m.OwnerID); err != nil || n != 1 {
		t.Errorf("CountMemories = %d, %v; want 1", n, err)
	}
	// A text with a NUL and invalid UTF-8 is stored as PlainText.
	odd := f.newMemory(t, "odd", f.id("ana"), "a b\uFFFDc")
	odd.Text = "a\x00b\xffc"
	if got := f.putMemory(t, odd); got.Text != "a b\uFFFDc" {
		t.Errorf("odd text stored as %q", got.Text)
	}
}

func testMemoryInvalid(t *testing.T, f *fixture) {
	ctx := t.Context()
	ana := f.id("ana")
	ok := f.newMemory(t, "ok", ana, "a fact")
	other := localVector(t, "x")
	short := embed.Pack(embed.Vector{1, 0, 0})
	for name, change := range map[string]func(*store.Memory){
		"TextOverTheCap": func(m *store.Memory) { m.Text = strings.Repeat("ữ", store.MaxMemoryRunes+1) },
		"EmptyText":      func(m *store.Memory) { m.Text = "" },
		"BlankText":      func(m *store.Memory) { m.Text = " \n\t" },
		"NoOrg":          func(m *store.Memory) { m.OrgID = "" },
		"NoID":           func(m *store.Memory) { m.ID = "" },
		"OwnerWithNUL":   func(m *store.Memory) { m.OwnerID = "a\x00" },
		"NoModel":        func(m *store.Memory) { m.Model = "" },
		"NoVector":       func(m *store.Memory) { m.Vector = nil },
		"BadVector":      func(m *store.Memory) { m.Vector = append(embed.Packed{9}, other[1:]...) },
		"WrongDims":      func(m *store.Memory) { m.Vector = short },
		"NoCreatedAt":    func(m *store.Memory) { m.CreatedAt = time.Time{} },
	} {
		t.Run(name, func(t *testing.T) {
			m := ok
			m.ID = f.id(name)
			change(&m)
			if _, err := f.PutMemory(ctx, m, 0); !errors.Is(err, store.ErrMemoryInvalid) {
				t.Errorf("PutMemory: err = %v, want store.ErrMemoryInvalid", err)
			}
		})
	}
	// The cap at its exact length is accepted.
	at := ok
	at.ID, at.Text = f.id("cap"), strings.Repeat("ữ", store.MaxMemoryRunes)
	f.putMemory(t, at)
	if n, _ := f.CountMemories(ctx, ok.OrgID, ana); n != 1 {
		t.Errorf("after the refusals the owner holds %d memories, want 1", n)
	}
	// An update over the cap writes nothing.
	long := at
	long.Text, long.UpdatedAt = at.Text+"x", at.CreatedAt
	if _, err := f.UpdateMemory(ctx, long); !errors.Is(err, store.ErrMemoryInvalid) {
		t.Errorf("UpdateMemory over the cap: err = %v", err)
	}
	if got, _ := f.GetMemory(ctx, at.OrgID, ana, at.ID); got.Text != at.Text {
		t.Error("a refused update changed the memory")
	}
}

func testMemoryDuplicateID(t *testing.T, f *fixture) {
	m := f.newMemory(t, "m", f.id("ana"), "first")
	f.putMemory(t, m)
	again := m
	again.OwnerID, again.Text = f.id("bo"), "second"
	if _, err := f.PutMemory(t.Context(), again, 0); !errors.Is(err, store.ErrExists) {
		t.Errorf("PutMemory of a taken ID: err = %v, want store.ErrExists", err)
	}
	if got, err := f.GetMemory(t.Context(), m.OrgID, m.OwnerID, m.ID); err != nil || got.Text != "first" {
		t.Errorf("the first memory: %+v, %v", got, err)
	}
	// The same ID in another organisation is free.
	other := m
	other.OrgID = f.id("org2")
	f.putMemory(t, other)
}

// testMemoryIsolation: a person reaches their own memories and reads the
// organisation's shared ones, never another person's; an organisation
// never sees another's, shared or personal.
func testMemoryIsolation(t *testing.T, f *fixture) {
	ctx := t.Context()
	ana, bo := f.id("ana"), f.id("bo")
	mine := f.putMemory(t, f.newMemory(t, "ana", ana, "Ana keeps her bicycle in the garage"))
	theirs := f.putMemory(t, f.newMemory(t, "bo", bo, "Bo keeps his bicycle at the office"))
	shared := f.putMemory(t, f.newMemory(t, "shared", "", "Company bicycle parking is behind building B"))
	y := f.newMemory(t, "y-shared", "", "Org Y bicycle policy")
	y.OrgID = f.id("orgY")
	f.putMemory(t, y)
	yAna := f.newMemory(t, "y-ana", ana, "Ana in org Y rides a bicycle")
	yAna.OrgID = y.OrgID
	f.putMemory(t, yAna)
	org := mine.OrgID

	if got, want := sorted(f.searchIDs(t, org, ana, "bicycle")...), sorted(mine.ID, shared.ID); !slices.Equal(got, want) {
		t.Errorf("Ana's search: %v, want %v", got, want)
	}
	if got, want := sorted(f.searchIDs(t, org, bo, "bicycle")...), sorted(theirs.ID, shared.ID); !slices.Equal(got, want) {
		t.Errorf("Bo's search: %v, want %v", got, want)
	}
	if got, want := f.searchIDs(t, org, "", "bicycle"), []string{shared.ID}; !slices.Equal(got, want) {
		t.Errorf("the shared search: %v, want %v", got, want)
	}
	if got, want := sorted(f.searchIDs(t, y.OrgID, ana, "bicycle")...), sorted(y.ID, yAna.ID); !slices.Equal(got, want) {
		t.Errorf("org Y's search: %v, want %v", got, want)
	}
	if got, want := f.vectorIDs(t, org, ana, localModel), sorted(mine.ID, shared.ID); !slices.Equal(got, want) {
		t.Errorf("Ana's vectors: %v, want %v", got, want)
	}
	if got, want := f.vectorIDs(t, y.OrgID, ana, localModel), sorted(y.ID, yAna.ID); !slices.Equal(got, want) {
		t.Errorf("org Y's vectors: %v, want %v", got, want)
	}
	// Ana cannot get, update or delete Bo's memory, nor the shared one as
	// a person, nor hers from another organisation.
	for _, k := range []struct{ org, owner, id string }{
		{org, ana, theirs.ID}, {org, ana, shared.ID}, {y.OrgID, ana, mine.ID}, {org, "", mine.ID},
	} {
		_, err := f.GetMemory(ctx, k.org, k.owner, k.id)
		wantNotFound(t, "GetMemory out of scope", err)
		u := f.newMemory(t, "x", k.owner, "overwritten")
		u.OrgID, u.ID, u.UpdatedAt = k.org, k.id, at(30)
		_, err = f.UpdateMemory(ctx, u)
		wantNotFound(t, "UpdateMemory out of scope", err)
		wantNotFound(t, "DeleteMemory out of scope", f.DeleteMemory(ctx, k.org, k.owner, k.id))
	}
	for _, m := range []store.Memory{mine, theirs, shared} {
		got, err := f.GetMemory(ctx, m.OrgID, m.OwnerID, m.ID)
		if err != nil || got.Text != m.Text {
			t.Errorf("%s after the refused writes: %q, %v", m.ID, got.Text, err)
		}
	}
	if l, err := f.ListMemories(ctx, org, ana, store.MemoryPage{}); err != nil || len(l.Memories) != 1 || l.Memories[0].ID != mine.ID {
		t.Errorf("Ana's list: %+v, %v", l, err)
	}
}

func testMemoryUpdate(t *testing.T, f *fixture) {
	ctx := t.Context()
	ana := f.id("ana")
	m := f.putMemory(t, f.newMemory(t, "m", ana, "Ana lives in Hanoi"))
	u := f.newMemory(t, "m", ana, "Ana moved to Saigon")
	u.UpdatedAt = at(40)
	got, err := f.UpdateMemory(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	wantUTC(t, "UpdateMemory", got.CreatedAt, got.UpdatedAt)
	if !got.CreatedAt.Equal(m.CreatedAt) || !got.UpdatedAt.Equal(at(40)) || got.Text != u.Text {
		t.Errorf("UpdateMemory returned %+v", got)
	}
	read, err := f.GetMemory(ctx, m.OrgID, ana, m.ID)
	if err != nil || read.Text != u.Text || !bytes.Equal(read.Vector, u.Vector) || !read.UpdatedAt.Equal(at(40)) || !read.CreatedAt.Equal(m.CreatedAt) {
		t.Errorf("after the update: %+v, %v", read, err)
	}
	if ids := f.searchIDs(t, m.OrgID, ana, "hanoi"); len(ids) != 0 {
		t.Errorf("the old text is still found: %v", ids)
	}
	if ids := f.searchIDs(t, m.OrgID, ana, "saigon"); !slices.Equal(ids, []string{m.ID}) {
		t.Errorf("the new text is not found: %v", ids)
	}
	u.ID = f.id("none")
	_, err = f.UpdateMemory(ctx, u)
	wantNotFound(t, "UpdateMemory of no memory", err)
	u.ID, u.UpdatedAt = m.ID, time.Time{}
	if _, err := f.UpdateMemory(ctx, u); !errors.Is(err, store.ErrMemoryInvalid) {
		t.Errorf("UpdateMemory without UpdatedAt: err = %v, want store.ErrMemoryInvalid", err)
	}
}

func testMemoryDelete(t *testing.T, f *fixture) {
	ctx := t.Context()
	ana := f.id("ana")
	m := f.putMemory(t, f.newMemory(t, "m", ana, "Ana is allergic to peanuts"))
	keep := f.putMemory(t, f.newMemory(t, "keep", ana, "Ana likes peanuts' cousin, almonds"))
	if err := f.DeleteMemory(ctx, m.OrgID, ana, m.ID); err != nil {
		t.Fatal(err)
	}
	_, err := f.GetMemory(ctx, m.OrgID, ana, m.ID)
	wantNotFound(t, "GetMemory after DeleteMemory", err)
	wantNotFound(t, "DeleteMemory again", f.DeleteMemory(ctx, m.OrgID, ana, m.ID))
	if ids := f.searchIDs(t, m.OrgID, ana, "allergic peanuts"); !slices.Equal(ids, []string{keep.ID}) {
		t.Errorf("search after the delete: %v", ids)
	}
	if ids := f.vectorIDs(t, m.OrgID, ana, localModel); !slices.Equal(ids, []string{keep.ID}) {
		t.Errorf("vectors after the delete: %v", ids)
	}
	// The ID is free again.
	f.putMemory(t, m)
}

func testMemoryDeleteOwnerAndOrg(t *testing.T, f *fixture) {
	ctx := t.Context()
	ana, bo := f.id("ana"), f.id("bo")
	f.putMemory(t, f.newMemory(t, "a1", ana, "alpha one"))
	f.putMemory(t, f.newMemory(t, "a2", ana, "alpha two"))
	b := f.putMemory(t, f.newMemory(t, "b", bo, "alpha of bo"))
	s := f.putMemory(t, f.newMemory(t, "s", "", "alpha shared"))
	other := f.newMemory(t, "o", ana, "alpha elsewhere")
	other.OrgID = f.id("org2")
	f.putMemory(t, other)
	org := b.OrgID
	if n, err := f.DeleteOwnerMemories(ctx, org, ""); err != nil || n != 0 {
		t.Errorf("DeleteOwnerMemories of \"\" = %d, %v; want 0", n, err)
	}
	if n, err := f.DeleteOwnerMemories(ctx, org, ana); err != nil || n != 2 {
		t.Errorf("DeleteOwnerMemories = %d, %v; want 2", n, err)
	}
	if got, want := sorted(f.searchIDs(t, org, ana, "alpha")...), []string{s.ID}; !slices.Equal(got, want) {
		t.Errorf("Ana's search after her memories went: %v, want %v", got, want)
	}
	if got, want := sorted(f.searchIDs(t, org, bo, "alpha")...), sorted(b.ID, s.ID); !slices.Equal(got, want) {
		t.Errorf("Bo's search: %v, want %v", got, want)
	}
	if n, err := f.DeleteOrgMemories(ctx, org); err != nil || n != 2 {
		t.Errorf("DeleteOrgMemories = %d, %v; want 2", n, err)
	}
	if ids := f.searchIDs(t, org, bo, "alpha"); len(ids) != 0 {
		t.Errorf("search after the organisation's memories went: %v", ids)
	}
	if ids := f.vectorIDs(t, org, bo, localModel); len(ids) != 0 {
		t.Errorf("vectors after the organisation's memories went: %v", ids)
	}
	if ids := f.searchIDs(t, other.OrgID, ana, "alpha"); !slices.Equal(ids, []string{other.ID}) {
		t.Errorf("another organisation's memories: %v", ids)
	}
}

func testMemoryList(t *testing.T, f *fixture) {
	ctx := t.Context()
	ana := f.id("ana")
	var want []string
	for i := range 7 {
		m := f.newMemory(t, fmt.Sprintf("m%d", i), ana, fmt.Sprintf("fact %d", i))
		m.CreatedAt = at(10 + i/2) // pairs share a time: ID breaks the tie
		f.putMemory(t, m)
		want = append(want, m.ID)
	}
	slices.Reverse(want)
	var got []string
	p := store.MemoryPage{Limit: 3}
	for range 5 {
		l, err := f.ListMemories(ctx, f.id("org"), ana, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range l.Memories {
			if m.Vector != nil {
				t.Error("ListMemories returned a vector")
			}
			got = append(got, m.ID)
		}
		if !l.More {
			break
		}
		last := l.Memories[len(l.Memories)-1]
		p.BeforeCreatedAt, p.BeforeID = last.CreatedAt, last.ID
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages: %v, want newest first %v", got, want)
	}
	if (store.MemoryPage{Limit: 1000}).Size() != store.MaxMemoryPage || (store.MemoryPage{}).Size() != store.MaxMemoryPage {
		t.Error("page size not bounded")
	}
}

// testMemorySearchFolds: search matches case, composition and diacritics
// alike (Vietnamese typed without its marks), and words of scripts written
// without spaces.
func testMemorySearchFolds(t *testing.T, f *fixture) {
	ana := f.id("ana")
	org := f.id("org")
	vi := f.putMemory(t, f.newMemory(t, "vi", ana, "Chị Lan sống ở Hà Nội, gần hồ Hoàn Kiếm"))
	ja := f.putMemory(t, f.newMemory(t, "ja", ana, "毎朝コーヒーを飲みます"))
	ru := f.putMemory(t, f.newMemory(t, "ru", ana, "Встреча в понедельник"))
	for q, want := range map[string]string{
		"hà nội":    vi.ID,
		"HÀ NỘI":    vi.ID,
		"ha noi":    vi.ID,
		"Hà Nội": vi.ID,
		"コーヒー":      ja.ID,
		"ВСТРЕЧА":   ru.ID,
	} {
		if ids := f.searchIDs(t, org, ana, q); !slices.Equal(ids, []string{want}) {
			t.Errorf("search %q: %v, want [%s]", q, ids, want)
		}
	}
}

// memorySyntax are texts that full-text query languages read as syntax.
var memorySyntax = []string{
	`"`, `""`, `"unclosed`, `*`, `a*`, `NEAR(a b)`, `a OR`, `OR`, `AND NOT`, `-a`, `^a`, `a:b`, `terms:x`,
	`'`, `''`, `\`, `a & b | !c`, `(a`, `a)`, `<->`, `a:*`, `!!`, `{}`, `[]`, `a + b`, `%`, `_`, "\x00",
	"\xff\xfe", `:`, `"a" NEAR/2 "b"`, `col:`, `""""`, `'a':1`, `a'b`,
}

func testMemorySearchSafe(t *testing.T, f *fixture) {
	ana := f.id("ana")
	org := f.id("org")
	m := f.putMemory(t, f.newMemory(t, "m", ana, `Quotes "like this" and a:b, NEAR OR AND, 'single' \back`))
	for _, q := range memorySyntax {
		if _, err := f.SearchMemories(t.Context(), store.MemorySearch{OrgID: org, OwnerID: ana, Text: q}); err != nil {
			t.Errorf("SearchMemories(%q): %v", q, err)
		}
	}
	for _, q := range []string{`"like`, `near`, `OR`, `single'`, `back\`} {
		if ids := f.searchIDs(t, org, ana, q); !slices.Equal(ids, []string{m.ID}) {
			t.Errorf("search %q: %v, want the memory", q, ids)
		}
	}
	if ids := f.searchIDs(t, org, ana, "!!! ... ???"); len(ids) != 0 {
		t.Errorf("a text without words found %v", ids)
	}
}

func testMemorySearchBounds(t *testing.T, f *fixture) {
	ana := f.id("ana")
	org := f.id("org")
	for i := range store.MaxMemoryHits + 5 {
		m := f.newMemory(t, fmt.Sprintf("m%d", i), ana, fmt.Sprintf("common word %d", i))
		f.putMemory(t, m)
	}
	got, err := f.SearchMemories(t.Context(), store.MemorySearch{OrgID: org, OwnerID: ana, Text: "common", Limit: 1000})
	if err != nil || len(got) != store.MaxMemoryHits {
		t.Errorf("a search for every memory returned %d, %v; want %d", len(got), err, store.MaxMemoryHits)
	}
	got, err = f.SearchMemories(t.Context(), store.MemorySearch{OrgID: org, OwnerID: ana, Text: "common", Limit: 3})
	if err != nil || len(got) != 3 {
		t.Errorf("Limit 3 returned %d, %v", len(got), err)
	}
	long := strings.Repeat("common ", store.MaxMemoryQueryRunes/7+1)
	if _, err := f.SearchMemories(t.Context(), store.MemorySearch{OrgID: org, OwnerID: ana, Text: long}); !errors.Is(err, store.ErrMemoryInvalid) {
		t.Errorf("a search text over the cap: err = %v, want store.ErrMemoryInvalid", err)
	}
	// A search of many distinct words is cut to MaxMemoryQueryTerms terms
	// (here all of them miss but the last, which is cut).
	var words []string
	for i := range store.MaxMemoryQueryTerms {
		words = append(words, fmt.Sprintf("zz%dq", i))
	}
	if ids := f.searchIDs(t, org, ana, strings.Join(append(words, "common"), " ")); len(ids) != 0 {
		t.Errorf("a term past MaxMemoryQueryTerms was searched: %d hits", len(ids))
	}
}

func testMemoryVectorsModel(t *testing.T, f *fixture) {
	ana := f.id("ana")
	a := f.putMemory(t, f.newMemory(t, "a", ana, "made by the local model"))
	b := f.newMemory(t, "b", ana, "made by another model")
	b.Model, b.Vector = "openai:text-embedding-3-small/3", embed.Pack(embed.Vector{0.6, 0.8, 0})
	f.putMemory(t, b)
	if got := f.vectorIDs(t, a.OrgID, ana, localModel); !slices.Equal(got, []string{a.ID}) {
		t.Errorf("vectors of the local model: %v", got)
	}
	if got := f.vectorIDs(t, a.OrgID, ana, b.Model); !slices.Equal(got, []string{b.ID}) {
		t.Errorf("vectors of the other model: %v", got)
	}
	if got := f.vectorIDs(t, a.OrgID, ana, "none/1"); len(got) != 0 {
		t.Errorf("vectors of an unknown model: %v", got)
	}
}

func testMemoryQuota(t *testing.T, f *fixture) {
	ctx := t.Context()
	ana := f.id("ana")
	for i := range 3 {
		if _, err := f.PutMemory(ctx, f.newMemory(t, fmt.Sprint("m", i), ana, "fact"), 3); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.PutMemory(ctx, f.newMemory(t, "over", ana, "fact"), 3); !errors.Is(err, store.ErrMemoryQuota) {
		t.Errorf("a fourth memory under a cap of 3: err = %v, want store.ErrMemoryQuota", err)
	}
	_, err := f.GetMemory(ctx, f.id("org"), ana, f.id("over"))
	wantNotFound(t, "the refused memory", err)
	// Another owner, and the shared memories, have caps of their own.
	f.putMemory(t, f.newMemory(t, "bo", f.id("bo"), "fact"))
	if _, err := f.PutMemory(ctx, f.newMemory(t, "shared", "", "fact"), 3); err != nil {
		t.Errorf("a shared memory: %v", err)
	}
	for limit, want := range map[int64]int64{0: store.MaxMemoriesPerOwner, -1: store.MaxMemoriesPerOwner,
		store.MaxMemoriesPerOwner + 1: store.MaxMemoriesPerOwner, 5: 5} {
		if got := store.MemoryLimit(limit); got != want {
			t.Errorf("MemoryLimit(%d) = %d, want %d", limit, got, want)
		}
	}
	if store.MaxMemoriesPerOwner != 10_000 {
		t.Errorf("MaxMemoriesPerOwner = %d", store.MaxMemoriesPerOwner)
	}
}

func testMemoryConcurrentQuota(t *testing.T, f *fixture) {
	ana := f.id("ana")
	const puts, limit = 12, 5
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for i := range puts {
		m := f.newMemory(t, fmt.Sprint("m", i), ana, "fact")
		wg.Go(func() {
			_, err := f.PutMemory(context.Background(), m, limit)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrMemoryQuota):
				refused++
			default:
				t.Errorf("PutMemory: %v", err)
			}
		})
	}
	wg.Wait()
	if ok != limit || refused != puts-limit {
		t.Errorf("%d stored and %d refused, want %d and %d", ok, refused, limit, puts-limit)
	}
	if n, err := f.CountMemories(t.Context(), f.id("org"), ana); err != nil || n != limit {
		t.Errorf("CountMemories = %d, %v; want %d", n, err, limit)
	}
}

// MemoryVectorsFollowChanges checks that what reader's MemoryVectors
// returns follows every kind of change writer makes (a put, an update,
// a delete, an owner's and an organisation's deletion), read after read,
// however the backend keeps vectors between reads (store.VectorCache).
// reader and writer are the same Memories, or two opened on one database
// (two processes, two replicas).
func MemoryVectorsFollowChanges(t *testing.T, reader, writer store.Memories) {
	ctx := t.Context()
	f := &fixture{prefix: "vectors-" + rand.Text()}
	ana, org := f.id("ana"), f.id("org")
	vectors := func(step string) map[string]string {
		t.Helper()
		out := map[string]string{}
		for range 2 { // the second read is the one a cache answers
			cs, err := reader.MemoryVectors(ctx, org, ana, localModel)
			if err != nil {
				t.Fatalf("%s: MemoryVectors: %v", step, err)
			}
			clear(out)
			for _, c := range cs {
				out[c.ID] = string(c.Vector)
			}
		}
		return out
	}
	want := func(step string, w map[string]string) {
		t.Helper()
		if got := vectors(step); !maps.Equal(got, w) {
			t.Errorf("%s: vectors of %d memories %v, want %d %v", step, len(got), slices.Sorted(maps.Keys(got)), len(w), slices.Sorted(maps.Keys(w)))
		}
	}
	put := func(m store.Memory) {
		t.Helper()
		if _, err := writer.PutMemory(ctx, m, 0); err != nil {
			t.Fatal(err)
		}
	}
	want("none yet", map[string]string{})
	a, s := f.newMemory(t, "a", ana, "likes green tea"), f.newMemory(t, "s", "", "the office opens at nine")
	put(a)
	put(s)
	want("put", map[string]string{a.ID: string(a.Vector), s.ID: string(s.Vector)})
	a.Text, a.Vector, a.UpdatedAt = "likes black coffee", localVector(t, "likes black coffee"), at(20)
	if _, err := writer.UpdateMemory(ctx, a); err != nil {
		t.Fatal(err)
	}
	want("update", map[string]string{a.ID: string(a.Vector), s.ID: string(s.Vector)})
	b := f.newMemory(t, "b", ana, "has a cat called Mochi")
	put(b)
	if err := writer.DeleteMemory(ctx, org, ana, a.ID); err != nil {
		t.Fatal(err)
	}
	want("delete", map[string]string{b.ID: string(b.Vector), s.ID: string(s.Vector)})
	if _, err := writer.DeleteOwnerMemories(ctx, org, ana); err != nil {
		t.Fatal(err)
	}
	want("owner deleted", map[string]string{s.ID: string(s.Vector)})
	put(b)
	want("put after the owner's deletion", map[string]string{b.ID: string(b.Vector), s.ID: string(s.Vector)})
	if _, err := writer.DeleteOrgMemories(ctx, org); err != nil {
		t.Fatal(err)
	}
	want("organisation deleted", map[string]string{})
	put(a)
	want("put after the organisation's deletion", map[string]string{a.ID: string(a.Vector)})
}

// testMemorySearchOwnerOnly: with OwnerOnly a search finds the person's
// own memories alone, however many shared ones rank above them, and
// never another person's.
func testMemorySearchOwnerOnly(t *testing.T, f *fixture) {
	ctx := t.Context()
	ana, bo := f.id("ana"), f.id("bo")
	own := f.putMemory(t, f.newMemory(t, "own", ana, "my favourite drink after a long day at the office is green tea"))
	f.putMemory(t, f.newMemory(t, "s1", "", "tea"))
	f.putMemory(t, f.newMemory(t, "s2", "", "green tea"))
	f.putMemory(t, f.newMemory(t, "bo", bo, "green tea"))
	got, err := f.SearchMemories(ctx, store.MemorySearch{OrgID: f.id("org"), OwnerID: ana, OwnerOnly: true, Text: "green tea", Limit: 1})
	if err != nil || len(got) != 1 || got[0].ID != own.ID {
		t.Errorf("owner-only search: %+v, %v; want ana's own memory alone", got, err)
	}
	all, err := f.SearchMemories(ctx, store.MemorySearch{OrgID: f.id("org"), OwnerID: ana, Text: "green tea", Limit: 10})
	if err != nil || len(all) != 3 {
		t.Errorf("search of what ana sees: %d hits, %v; want hers and the two shared", len(all), err)
	}
	for _, m := range all {
		if m.OwnerID == bo {
			t.Errorf("ana's search found bo's memory %s", m.ID)
		}
	}
}
