package store_test

import (
	"testing"

	"github.com/quiverhq/quiver/store"
)

// FuzzKnowledgeChunkID: a parsed ID names the same chunk again, and an
// ID made from a document and seq parses back to them.
func FuzzKnowledgeChunkID(f *testing.F) {
	for _, s := range []string{"doc#0", "doc#12", "a#b#3", "#1", "doc#", "doc#01", "doc#-1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		doc, seq, ok := store.ParseKnowledgeChunkID(id)
		if !ok {
			return
		}
		if doc == "" || seq < 0 || store.KnowledgeChunkID(doc, seq) != id {
			t.Errorf("%q parsed as (%q, %d)", id, doc, seq)
		}
		d2, s2, ok := store.ParseKnowledgeChunkID(store.KnowledgeChunkID(doc, seq))
		if !ok || d2 != doc || s2 != seq {
			t.Errorf("round trip of (%q, %d) = (%q, %d, %v)", doc, seq, d2, s2, ok)
		}
	})
}

func TestCheckKnowledgeReasonIsOneBoundedLine(t *testing.T) {
	long := ""
	for range 600 {
		long += "é"
	}
	got := store.CheckKnowledgeReason("first\nsecond\t" + long)
	if len(got) > store.MaxKnowledgeReasonBytes || got[:12] != "first second" {
		t.Errorf("reason = %q (%d bytes)", got[:20], len(got))
	}
}
