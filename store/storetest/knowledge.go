package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
)

// knowledgeCases checks the Knowledge repository.
func knowledgeCases() []suiteCase {
	return []suiteCase{
		{"Lifecycle", testKnowledgeLifecycle},
		{"Invalid", testKnowledgeInvalid},
		{"Isolation", testKnowledgeIsolation},
		{"FailedKeepsNoChunks", testKnowledgeFailed},
		{"OnlyReadySearched", testKnowledgeOnlyReady},
		{"VectorsOfOneModel", testKnowledgeVectorsModel},
		{"DocumentCap", testKnowledgeDocumentCap},
		{"ChunkCap", testKnowledgeChunkCap},
		{"DeleteAgentDeletesKnowledge", testKnowledgeDeleteAgent},
		{"ConcurrentDocumentCap", testKnowledgeConcurrentCap},
		{"DocumentChunks", testKnowledgeDocumentChunks},
	}
}

// newDocument returns an unstored document of the fixture's "org".
func (f *fixture) newDocument(id, agent string) store.KnowledgeDocument {
	return store.KnowledgeDocument{OrgID: f.id("org"), Agent: agent, ID: f.id(id), Name: id + ".txt",
		MediaType: "text/plain", Size: 100, CreatedAt: at(10)}
}

// chunksOf returns the chunks of texts from seq, embedded locally.
func chunksOf(t testing.TB, seq int, texts ...string) []store.KnowledgeChunk {
	t.Helper()
	out := make([]store.KnowledgeChunk, len(texts))
	for i, s := range texts {
		out[i] = store.KnowledgeChunk{Seq: seq + i, Text: s, Model: localModel, Vector: localVector(t, s)}
	}
	return out
}

// indexDocument stores d with texts as its chunks and makes it ready.
func (f *fixture) indexDocument(t testing.TB, d store.KnowledgeDocument, texts ...string) store.KnowledgeDocument {
	t.Helper()
	ctx := t.Context()
	if _, err := f.PutKnowledgeDocument(ctx, d); err != nil {
		t.Fatalf("PutKnowledgeDocument(%s): %v", d.ID, err)
	}
	if _, err := f.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, len(texts), chunksOf(t, 0, texts...), at(11)); err != nil {
		t.Fatalf("AddKnowledgeChunks(%s): %v", d.ID, err)
	}
	got, err := f.FinishKnowledgeDocument(ctx, d.OrgID, d.Agent, d.ID, "", at(12))
	if err != nil {
		t.Fatalf("FinishKnowledgeDocument(%s): %v", d.ID, err)
	}
	return got
}

// hitIDs returns the chunk IDs of hs.
func hitIDs(hs []store.KnowledgeHit) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, h.ID())
	}
	return out
}

// knowledgeSearch returns the chunk IDs SearchKnowledge finds.
func (f *fixture) knowledgeSearch(t *testing.T, orgID, agent, text string) []string {
	t.Helper()
	hs, err := f.SearchKnowledge(t.Context(), store.KnowledgeSearch{OrgID: orgID, Agent: agent, Text: text})
	if err != nil {
		t.Fatalf("SearchKnowledge(%q): %v", text, err)
	}
	return hitIDs(hs)
}

func candidateIDs(cs []retrieve.Candidate) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func testKnowledgeLifecycle(t *testing.T, f *fixture) {
	ctx := t.Context()
	d := f.newDocument("doc", "helper")
	put, err := f.PutKnowledgeDocument(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if put.Status != store.KnowledgeIndexing || put.Chunks != 0 || put.Total != 0 {
		t.Errorf("put = %+v, want indexing with no chunks", put)
	}
	wantUTC(t, "put", put.CreatedAt, put.UpdatedAt)
	if _, err := f.PutKnowledgeDocument(ctx, d); !errors.Is(err, store.ErrExists) {
		t.Errorf("second put: err = %v, want ErrExists", err)
	}
	if has, err := f.HasKnowledge(ctx, d.OrgID, "helper"); err != nil || has {
		t.Errorf("HasKnowledge while indexing = %v, %v; want false", has, err)
	}
	got, err := f.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, 3, chunksOf(t, 0, "The quarterly revenue grew by ten percent."), at(11))
	if err != nil {
		t.Fatal(err)
	}
	if got.Chunks != 1 || got.Total != 3 {
		t.Errorf("after one batch: chunks %d of %d, want 1 of 3", got.Chunks, got.Total)
	}
	if _, err := f.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, 3, chunksOf(t, 0, "again"), at(11)); !errors.Is(err, store.ErrKnowledgeInvalid) {
		t.Errorf("a repeated Seq: err = %v, want ErrKnowledgeInvalid", err)
	}
	if _, err := f.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, 3,
		chunksOf(t, 1, "Hà Nội office opens in May.", "Shipping costs fell."), at(11)); err != nil {
		t.Fatal(err)
	}
	if ids := f.knowledgeSearch(t, d.OrgID, "helper", "revenue"); len(ids) != 0 {
		t.Errorf("an indexing document was searched: %v", ids)
	}
	ready, err := f.FinishKnowledgeDocument(ctx, d.OrgID, d.Agent, d.ID, "", at(12))
	if err != nil {
		t.Fatal(err)
	}
	if ready.Status != store.KnowledgeReady || ready.Chunks != 3 || ready.Total != 3 {
		t.Errorf("ready = %+v", ready)
	}
	if _, err := f.FinishKnowledgeDocument(ctx, d.OrgID, d.Agent, d.ID, "", at(12)); !errors.Is(err, store.ErrKnowledgeInvalid) {
		t.Errorf("finishing twice: err = %v, want ErrKnowledgeInvalid", err)
	}
	if has, err := f.HasKnowledge(ctx, d.OrgID, "helper"); err != nil || !has {
		t.Errorf("HasKnowledge when ready = %v, %v; want true", has, err)
	}
	hs, err := f.SearchKnowledge(ctx, store.KnowledgeSearch{OrgID: d.OrgID, Agent: "helper", Text: "ha noi"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || hs[0].Name != "doc.txt" || hs[0].Seq != 1 || !strings.Contains(hs[0].Text, "Hà Nội") {
		t.Errorf("search ha noi = %+v", hs)
	}
	cs, err := f.KnowledgeChunks(ctx, d.OrgID, "helper", []string{store.KnowledgeChunkID(d.ID, 2), "nonsense", store.KnowledgeChunkID(d.ID, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{store.KnowledgeChunkID(d.ID, 2), store.KnowledgeChunkID(d.ID, 0)}; diff(want, hitIDs(cs)) != "" {
		t.Errorf("KnowledgeChunks = %v, want %v", hitIDs(cs), want)
	}
	list, err := f.ListKnowledgeDocuments(ctx, d.OrgID, "helper")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || diff(ready, list[0]) != "" {
		t.Errorf("list = %+v, want [%+v]", list, ready)
	}
	if err := f.DeleteKnowledgeDocument(ctx, d.OrgID, "helper", d.ID); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "second delete", f.DeleteKnowledgeDocument(ctx, d.OrgID, "helper", d.ID))
	_, err = f.GetKnowledgeDocument(ctx, d.OrgID, "helper", d.ID)
	wantNotFound(t, "get after delete", err)
	if ids := f.knowledgeSearch(t, d.OrgID, "helper", "revenue"); len(ids) != 0 {
		t.Errorf("a deleted document was searched: %v", ids)
	}
	vs, err := f.KnowledgeVectors(ctx, d.OrgID, "helper", localModel)
	if err != nil || len(vs) != 0 {
		t.Errorf("vectors after delete = %v, %v", candidateIDs(vs), err)
	}
}

func testKnowledgeInvalid(t *testing.T, f *fixture) {
	ctx := t.Context()
	tests := []struct {
		name string
		edit func(*store.KnowledgeDocument)
		want error
	}{
		{"no agent", func(d *store.KnowledgeDocument) { d.Agent = "" }, store.ErrKnowledgeInvalid},
		{"no name", func(d *store.KnowledgeDocument) { d.Name = "" }, store.ErrKnowledgeInvalid},
		{"a path", func(d *store.KnowledgeDocument) { d.Name = "a/b.txt" }, store.ErrKnowledgeInvalid},
		{"bad media type", func(d *store.KnowledgeDocument) { d.MediaType = "not a type" }, store.ErrKnowledgeInvalid},
		{"zero time", func(d *store.KnowledgeDocument) { d.CreatedAt = time.Time{} }, store.ErrKnowledgeInvalid},
		{"too large", func(d *store.KnowledgeDocument) { d.Size = store.MaxKnowledgeFileBytes + 1 }, store.ErrKnowledgeQuota},
	}
	for i, tc := range tests {
		d := f.newDocument(fmt.Sprintf("bad%d", i), "helper")
		tc.edit(&d)
		if _, err := f.PutKnowledgeDocument(ctx, d); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if list, err := f.ListKnowledgeDocuments(ctx, f.id("org"), "helper"); err != nil || len(list) != 0 {
		t.Errorf("refused documents were stored: %v, %v", list, err)
	}
	d := f.newDocument("doc", "helper")
	if _, err := f.PutKnowledgeDocument(ctx, d); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name   string
		total  int
		chunks []store.KnowledgeChunk
		want   error
	}{
		{"blank text", 1, []store.KnowledgeChunk{{Seq: 0, Text: "  "}}, store.ErrKnowledgeInvalid},
		{"long text", 1, []store.KnowledgeChunk{{Seq: 0, Text: strings.Repeat("a", store.MaxKnowledgeChunkRunes+1)}}, store.ErrKnowledgeInvalid},
		{"vector without model", 1, []store.KnowledgeChunk{{Seq: 0, Text: "x", Vector: localVector(t, "x")}}, store.ErrKnowledgeInvalid},
		{"wrong dimension", 1, []store.KnowledgeChunk{{Seq: 0, Text: "x", Model: "local:ngram/7", Vector: localVector(t, "x")}}, store.ErrKnowledgeInvalid},
		{"total under chunks", 0, chunksOf(t, 0, "x"), store.ErrKnowledgeInvalid},
		{"too many chunks", store.MaxKnowledgeChunks + 1, chunksOf(t, 0, "x"), store.ErrKnowledgeQuota},
	}
	for _, tc := range bad {
		if _, err := f.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, tc.total, tc.chunks, at(11)); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	got, err := f.GetKnowledgeDocument(ctx, d.OrgID, d.Agent, d.ID)
	if err != nil || got.Chunks != 0 || got.Total != 0 {
		t.Errorf("refused chunks changed the document: %+v, %v", got, err)
	}
	// Without a model, a chunk is kept for full text alone.
	if _, err := f.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, 1, []store.KnowledgeChunk{{Seq: 0, Text: "plain words"}}, at(11)); err != nil {
		t.Errorf("a chunk without a vector: %v", err)
	}
	if _, err := f.SearchKnowledge(ctx, store.KnowledgeSearch{OrgID: d.OrgID, Agent: d.Agent, Text: strings.Repeat("a", store.MaxMemoryQueryRunes+1)}); !errors.Is(err, store.ErrKnowledgeInvalid) {
		t.Errorf("a long search: err = %v, want ErrKnowledgeInvalid", err)
	}
}

func testKnowledgeIsolation(t *testing.T, f *fixture) {
	ctx := t.Context()
	mine := f.indexDocument(t, f.newDocument("mine", "helper"), "The launch code word is tangerine.")
	other := f.sub("other")
	theirs := other.indexDocument(t, other.newDocument("theirs", "helper"), "Their tangerine secret.")
	sibling := f.indexDocument(t, f.newDocument("sibling", "sales"), "Sales tangerine pipeline.")
	if got := f.knowledgeSearch(t, mine.OrgID, "helper", "tangerine"); diff([]string{store.KnowledgeChunkID(mine.ID, 0)}, got) != "" {
		t.Errorf("search = %v, want only this agent's chunk", got)
	}
	vs, err := f.KnowledgeVectors(ctx, mine.OrgID, "helper", localModel)
	if err != nil {
		t.Fatal(err)
	}
	if diff([]string{store.KnowledgeChunkID(mine.ID, 0)}, candidateIDs(vs)) != "" {
		t.Errorf("vectors = %v, want only this agent's", candidateIDs(vs))
	}
	for _, c := range []struct{ org, agent, id string }{
		{mine.OrgID, "helper", theirs.ID}, {theirs.OrgID, "helper", mine.ID}, {mine.OrgID, "helper", sibling.ID}, {mine.OrgID, "sales", mine.ID},
	} {
		_, err := f.GetKnowledgeDocument(ctx, c.org, c.agent, c.id)
		wantNotFound(t, "get out of scope", err)
		wantNotFound(t, "delete out of scope", f.DeleteKnowledgeDocument(ctx, c.org, c.agent, c.id))
		hs, err := f.KnowledgeChunks(ctx, c.org, c.agent, []string{store.KnowledgeChunkID(c.id, 0)})
		if err != nil || len(hs) != 0 {
			t.Errorf("KnowledgeChunks out of scope = %v, %v", hitIDs(hs), err)
		}
		if _, err := f.AddKnowledgeChunks(ctx, c.org, c.agent, c.id, 2, chunksOf(t, 1, "x"), at(13)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("AddKnowledgeChunks out of scope: err = %v", err)
		}
		if n, err := f.SetKnowledgeVectors(ctx, c.org, c.agent, []store.KnowledgeVector{
			{DocumentID: c.id, Seq: 0, Model: localModel, Vector: localVector(t, "y")}}); err != nil || n != 0 {
			t.Errorf("SetKnowledgeVectors out of scope changed %d, %v", n, err)
		}
	}
	if has, _ := f.HasKnowledge(ctx, mine.OrgID, "nobody"); has {
		t.Error("an agent without documents has knowledge")
	}
	if got := other.knowledgeSearch(t, theirs.OrgID, "helper", "tangerine"); len(got) != 1 {
		t.Errorf("the other organisation's search = %v", got)
	}
}

func testKnowledgeFailed(t *testing.T, f *fixture) {
	ctx := t.Context()
	good := f.indexDocument(t, f.newDocument("good", "helper"), "Apples are red.")
	d := f.newDocument("bad", "helper")
	if _, err := f.PutKnowledgeDocument(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, 2, chunksOf(t, 0, "Apples half written"), at(11)); err != nil {
		t.Fatal(err)
	}
	failed, err := f.FinishKnowledgeDocument(ctx, d.OrgID, d.Agent, d.ID, "bad.txt is a binary file;\nonly text", at(12))
	if err != nil {
		t.Fatal(err)
	}
	if failed.Status != store.KnowledgeFailed || failed.Reason != "bad.txt is a binary file; only text" || failed.Chunks != 0 {
		t.Errorf("failed = %+v", failed)
	}
	if got := f.knowledgeSearch(t, d.OrgID, "helper", "apples"); diff([]string{store.KnowledgeChunkID(good.ID, 0)}, got) != "" {
		t.Errorf("search = %v, want the good document's chunk only", got)
	}
	list, err := f.ListKnowledgeDocuments(ctx, d.OrgID, "helper")
	// Both made at(10): ordered by ID, "bad" first.
	if err != nil || len(list) != 2 || list[0].Status != store.KnowledgeFailed || list[1].Status != store.KnowledgeReady {
		t.Errorf("list = %+v, %v", list, err)
	}
}

func testKnowledgeOnlyReady(t *testing.T, f *fixture) {
	ctx := t.Context()
	d := f.newDocument("doc", "helper")
	if _, err := f.PutKnowledgeDocument(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, 1, chunksOf(t, 0, "zebra crossing"), at(11)); err != nil {
		t.Fatal(err)
	}
	vs, err := f.KnowledgeVectors(ctx, d.OrgID, d.Agent, localModel)
	if err != nil || len(vs) != 0 {
		t.Errorf("vectors of an indexing document = %v, %v", candidateIDs(vs), err)
	}
	stale, err := f.StaleKnowledgeChunks(ctx, d.OrgID, d.Agent, "other:model/3", 0)
	if err != nil || len(stale) != 0 {
		t.Errorf("stale chunks of an indexing document = %v, %v", hitIDs(stale), err)
	}
}

func testKnowledgeVectorsModel(t *testing.T, f *fixture) {
	ctx := t.Context()
	d := f.newDocument("doc", "helper")
	if _, err := f.PutKnowledgeDocument(ctx, d); err != nil {
		t.Fatal(err)
	}
	chunks := append(chunksOf(t, 0, "one embedded"), store.KnowledgeChunk{Seq: 1, Text: "two not embedded"})
	if _, err := f.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, 2, chunks, at(11)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.FinishKnowledgeDocument(ctx, d.OrgID, d.Agent, d.ID, "", at(12)); err != nil {
		t.Fatal(err)
	}
	vs, err := f.KnowledgeVectors(ctx, d.OrgID, d.Agent, localModel)
	if err != nil || diff([]string{store.KnowledgeChunkID(d.ID, 0)}, candidateIDs(vs)) != "" {
		t.Errorf("vectors of the local model = %v, %v", candidateIDs(vs), err)
	}
	if vs, _ := f.KnowledgeVectors(ctx, d.OrgID, d.Agent, "other:model/512"); len(vs) != 0 {
		t.Errorf("vectors of another model = %v", candidateIDs(vs))
	}
	stale, err := f.StaleKnowledgeChunks(ctx, d.OrgID, d.Agent, localModel, 0)
	if err != nil || diff([]string{store.KnowledgeChunkID(d.ID, 1)}, hitIDs(stale)) != "" {
		t.Fatalf("stale = %v, %v; want the chunk without a vector", hitIDs(stale), err)
	}
	n, err := f.SetKnowledgeVectors(ctx, d.OrgID, d.Agent, []store.KnowledgeVector{
		{DocumentID: d.ID, Seq: 1, Model: localModel, Vector: localVector(t, "two not embedded")},
		{DocumentID: d.ID, Seq: 9, Model: localModel, Vector: localVector(t, "none")},
	})
	if err != nil || n != 1 {
		t.Errorf("SetKnowledgeVectors = %d, %v; want 1", n, err)
	}
	if stale, _ := f.StaleKnowledgeChunks(ctx, d.OrgID, d.Agent, localModel, 0); len(stale) != 0 {
		t.Errorf("stale after re-index = %v", hitIDs(stale))
	}
	if vs, _ := f.KnowledgeVectors(ctx, d.OrgID, d.Agent, localModel); len(vs) != 2 {
		t.Errorf("vectors after re-index = %v", candidateIDs(vs))
	}
	if _, err := f.SetKnowledgeVectors(ctx, d.OrgID, d.Agent, []store.KnowledgeVector{{DocumentID: d.ID, Seq: 0, Model: "m/3", Vector: localVector(t, "x")}}); !errors.Is(err, store.ErrKnowledgeInvalid) {
		t.Errorf("a vector not of its model's dimension: err = %v", err)
	}
}

func testKnowledgeDocumentCap(t *testing.T, f *fixture) {
	ctx := t.Context()
	for i := range store.MaxKnowledgeDocuments {
		if _, err := f.PutKnowledgeDocument(ctx, f.newDocument(fmt.Sprintf("d%04d", i), "helper")); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
	}
	if _, err := f.PutKnowledgeDocument(ctx, f.newDocument("over", "helper")); !errors.Is(err, store.ErrKnowledgeQuota) {
		t.Errorf("a document over the cap: err = %v, want ErrKnowledgeQuota", err)
	}
	if _, err := f.GetKnowledgeDocument(ctx, f.id("org"), "helper", f.id("over")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused document was stored: %v", err)
	}
	if _, err := f.PutKnowledgeDocument(ctx, f.newDocument("another agent", "sales")); err != nil {
		t.Errorf("another agent's document: %v", err)
	}
}

func testKnowledgeChunkCap(t *testing.T, f *fixture) {
	ctx := t.Context()
	d := f.newDocument("doc", "helper")
	if _, err := f.PutKnowledgeDocument(ctx, d); err != nil {
		t.Fatal(err)
	}
	texts := make([]string, store.MaxKnowledgeBatch+1)
	for i := range texts {
		texts[i] = "chunk"
	}
	if _, err := f.AddKnowledgeChunks(ctx, d.OrgID, d.Agent, d.ID, len(texts), chunksOf(t, 0, texts...), at(11)); !errors.Is(err, store.ErrKnowledgeInvalid) {
		t.Errorf("a batch over MaxKnowledgeBatch: err = %v", err)
	}
	if got, _ := f.GetKnowledgeDocument(ctx, d.OrgID, d.Agent, d.ID); got.Chunks != 0 {
		t.Errorf("the refused batch stored %d chunks", got.Chunks)
	}
}

func testKnowledgeDeleteAgent(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.id("org")
	if err := f.PutAgent(ctx, store.StoredAgent{OrgID: org, Name: "helper", Definition: []byte("name: helper\n"), CreatedAt: at(1), UpdatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	d := f.indexDocument(t, f.newDocument("doc", "helper"), "Penguins live in the south.")
	kept := f.indexDocument(t, f.newDocument("kept", "sales"), "Penguins sell well.")
	if err := f.DeleteAgent(ctx, org, "helper"); err != nil {
		t.Fatal(err)
	}
	_, err := f.GetKnowledgeDocument(ctx, org, "helper", d.ID)
	wantNotFound(t, "the deleted agent's document", err)
	if got := f.knowledgeSearch(t, org, "helper", "penguins"); len(got) != 0 {
		t.Errorf("the deleted agent's chunks are searched: %v", got)
	}
	if vs, _ := f.KnowledgeVectors(ctx, org, "helper", localModel); len(vs) != 0 {
		t.Errorf("the deleted agent's vectors remain: %v", candidateIDs(vs))
	}
	if got := f.knowledgeSearch(t, org, "sales", "penguins"); diff([]string{store.KnowledgeChunkID(kept.ID, 0)}, got) != "" {
		t.Errorf("another agent's knowledge went too: %v", got)
	}
	if n, err := f.DeleteAgentKnowledge(ctx, org, "sales"); err != nil || n != 1 {
		t.Errorf("DeleteAgentKnowledge = %d, %v; want 1", n, err)
	}
}

func testKnowledgeConcurrentCap(t *testing.T, f *fixture) {
	ctx := t.Context()
	for i := range store.MaxKnowledgeDocuments - 2 {
		if _, err := f.PutKnowledgeDocument(ctx, f.newDocument(fmt.Sprintf("d%04d", i), "helper")); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = f.PutKnowledgeDocument(ctx, f.newDocument(fmt.Sprintf("race%d", i), "helper"))
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrKnowledgeQuota):
			t.Errorf("a racing put: %v", err)
		}
	}
	list, err := f.ListKnowledgeDocuments(ctx, f.id("org"), "helper")
	if err != nil {
		t.Fatal(err)
	}
	if ok != 2 || len(list) != store.MaxKnowledgeDocuments {
		t.Errorf("%d racing puts succeeded and %d documents are stored; want 2 and %d", ok, len(list), store.MaxKnowledgeDocuments)
	}
}

// testKnowledgeDocumentChunks: a ready document's chunks come in Seq
// order from a Seq on, a page at a time; out of scope or not ready gives
// none.
func testKnowledgeDocumentChunks(t *testing.T, f *fixture) {
	ctx := t.Context()
	d := f.indexDocument(t, f.newDocument("doc", "helper"), "one", "two", "three", "four", "five")
	seqs := func(hs []store.KnowledgeHit) []string {
		out := []string{}
		for _, h := range hs {
			out = append(out, fmt.Sprintf("%d:%s:%s", h.Seq, h.Name, h.Text))
		}
		return out
	}
	got, err := f.DocumentKnowledgeChunks(ctx, d.OrgID, "helper", d.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s := diff([]string{"0:doc.txt:one", "1:doc.txt:two", "2:doc.txt:three", "3:doc.txt:four", "4:doc.txt:five"}, seqs(got)); s != "" {
		t.Errorf("all chunks (-want +got):\n%s", s)
	}
	got, err = f.DocumentKnowledgeChunks(ctx, d.OrgID, "helper", d.ID, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if s := diff([]string{"2:doc.txt:three", "3:doc.txt:four"}, seqs(got)); s != "" {
		t.Errorf("from 2, two (-want +got):\n%s", s)
	}
	other := f.sub("other")
	indexing := f.newDocument("indexing", "helper")
	if _, err := f.PutKnowledgeDocument(ctx, indexing); err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddKnowledgeChunks(ctx, indexing.OrgID, "helper", indexing.ID, 2, chunksOf(t, 0, "half"), at(11)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, org, agent, id string }{
		{"another agent", d.OrgID, "sales", d.ID},
		{"another organisation", other.id("org"), "helper", d.ID},
		{"no such document", d.OrgID, "helper", "nope"},
		{"indexing", d.OrgID, "helper", indexing.ID},
	} {
		hs, err := f.DocumentKnowledgeChunks(ctx, c.org, c.agent, c.id, 0, 0)
		if err != nil || len(hs) != 0 {
			t.Errorf("%s: %v, %v; want none", c.name, seqs(hs), err)
		}
	}
}
