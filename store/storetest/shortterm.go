package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// shortTermCases checks the ShortTerms repository.
func shortTermCases() []suiteCase {
	return []suiteCase{
		{"ReplacedWhole", testShortTermReplaced},
		{"BlankDeletes", testShortTermBlank},
		{"Invalid", testShortTermInvalid},
		{"Isolation", testShortTermIsolation},
		{"DeletedWithConversation", testShortTermConversationDelete},
	}
}

// getShortTerm returns the thread's memory, failing on an error other
// than ErrNotFound; found reports whether there is one.
func (f *fixture) getShortTerm(t *testing.T, orgID, thread string) (m store.ShortTerm, found bool) {
	t.Helper()
	m, err := f.GetShortTerm(t.Context(), orgID, thread)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.ShortTerm{}, false
	case err != nil:
		t.Fatalf("GetShortTerm(%s): %v", thread, err)
	}
	return m, true
}

func testShortTermReplaced(t *testing.T, f *fixture) {
	org, thread := f.id("org"), "channel:"+f.id("ch")
	first := store.ShortTerm{OrgID: org, Thread: thread, ConversationID: f.id("c1"), Text: "Task: plan the offsite.\nOpen: venue.", UpdatedAt: at(1)}
	if err := f.PutShortTerm(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	second := store.ShortTerm{OrgID: org, Thread: thread, ConversationID: f.id("c2"), Text: "  Venue: Đà Lạt.  ", UpdatedAt: at(2)}
	if err := f.PutShortTerm(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	got, found := f.getShortTerm(t, org, thread)
	want := store.ShortTerm{OrgID: org, Thread: thread, ConversationID: f.id("c2"), Text: "Venue: Đà Lạt.", UpdatedAt: at(2).UTC()}
	if !found {
		t.Fatal("the memory written is not found")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetShortTerm after a replace (-want +got):\n%s", diff)
	}
	if got.UpdatedAt.Location() != time.UTC {
		t.Errorf("UpdatedAt in %v, want UTC", got.UpdatedAt.Location())
	}
}

func testShortTermBlank(t *testing.T, f *fixture) {
	org, thread := f.id("org"), "conversation:"+f.id("c")
	m := store.ShortTerm{OrgID: org, Thread: thread, Text: "notes", UpdatedAt: at(1)}
	if err := f.PutShortTerm(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	m.Text = " \n "
	if err := f.PutShortTerm(t.Context(), m); err != nil {
		t.Fatalf("a blank text: %v", err)
	}
	if _, found := f.getShortTerm(t, org, thread); found {
		t.Error("a blank text left the memory in place")
	}
	if err := f.PutShortTerm(t.Context(), m); err != nil {
		t.Errorf("a blank text with no memory: %v", err)
	}
}

func testShortTermInvalid(t *testing.T, f *fixture) {
	org, thread := f.id("org"), "conversation:"+f.id("c")
	kept := store.ShortTerm{OrgID: org, Thread: thread, Text: "kept", UpdatedAt: at(1)}
	if err := f.PutShortTerm(t.Context(), kept); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]store.ShortTerm{
		"over the limit": {OrgID: org, Thread: thread, Text: strings.Repeat("é", store.MaxShortTermRunes+1), UpdatedAt: at(2)},
		"no thread":      {OrgID: org, Text: "x", UpdatedAt: at(2)},
		"no org":         {Thread: thread, Text: "x", UpdatedAt: at(2)},
		"no time":        {OrgID: org, Thread: thread, Text: "x"},
		"NUL in thread":  {OrgID: org, Thread: "a\x00b", Text: "x", UpdatedAt: at(2)},
	} {
		if err := f.PutShortTerm(t.Context(), m); !errors.Is(err, store.ErrShortTermInvalid) {
			t.Errorf("%s: %v, want ErrShortTermInvalid", name, err)
		}
	}
	if got, _ := f.getShortTerm(t, org, thread); got.Text != "kept" {
		t.Errorf("after refused writes the memory is %q, want %q", got.Text, "kept")
	}
	at4000 := store.ShortTerm{OrgID: org, Thread: thread, Text: strings.Repeat("é", store.MaxShortTermRunes), UpdatedAt: at(3)}
	if err := f.PutShortTerm(t.Context(), at4000); err != nil {
		t.Errorf("exactly %d characters: %v", store.MaxShortTermRunes, err)
	}
}

func testShortTermIsolation(t *testing.T, f *fixture) {
	org, thread := f.id("org"), "channel:"+f.id("ch")
	if err := f.PutShortTerm(t.Context(), store.ShortTerm{OrgID: org, Thread: thread, Text: "secret plan", UpdatedAt: at(1)}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct{ org, thread string }{
		{f.id("other-org"), thread}, {org, "channel:" + f.id("other")}, {org, "conversation:" + f.id("ch")}, {org, ""},
	} {
		if m, found := f.getShortTerm(t, k.org, k.thread); found {
			t.Errorf("GetShortTerm(%s, %s) = %q, want not found", k.org, k.thread, m.Text)
		}
	}
}

func testShortTermConversationDelete(t *testing.T, f *fixture) {
	org := f.id("org")
	SeedConversation(t, f.Store, org, "ana", f.id("gone"), "gone")
	SeedConversation(t, f.Store, org, "ana", f.id("kept"), "kept")
	if err := f.DeleteConversation(t.Context(), org, "ana", f.id("gone")); err != nil {
		t.Fatal(err)
	}
	if _, found := f.getShortTerm(t, org, "conversation:"+f.id("gone")); found {
		t.Error("the deleted conversation's short-term memory is still there")
	}
	if _, found := f.getShortTerm(t, org, "conversation:"+f.id("kept")); !found {
		t.Error("the other conversation's short-term memory went with it")
	}
}
