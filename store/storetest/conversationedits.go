package storetest

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
)

// update calls UpdateConversation, failing the test on error.
func (f *fixture) update(t *testing.T, c store.Conversation, u store.ConversationUpdate) store.Conversation {
	t.Helper()
	got, err := f.UpdateConversation(t.Context(), c.OrgID, c.UserID, c.ID, u)
	if err != nil {
		t.Fatalf("UpdateConversation %s: %v", c.ID, err)
	}
	return got
}

// getConversation returns the stored conversation, failing the test on
// error.
func (f *fixture) getConversation(t *testing.T, c store.Conversation) store.Conversation {
	t.Helper()
	got, err := f.GetConversation(t.Context(), c.OrgID, c.ID)
	if err != nil {
		t.Fatalf("GetConversation %s: %v", c.ID, err)
	}
	return got
}

// testConversationClaimKeepsModel: a claim creates a conversation with
// its model, and a later claim by the owner leaves the stored model (and
// title) alone.
func testConversationClaimKeepsModel(t *testing.T, f *fixture) {
	c := f.newConversation("org", "conv", "user")
	c.Model = "anthropic:claude-sonnet-4-5"
	f.claim(t, c)
	again := c
	again.Model, again.Title, again.UpdatedAt = "openai:gpt-4.1", "Other", at(45)
	want := c
	want.UpdatedAt = at(45)
	if d := diff(want, f.claim(t, again)); d != "" {
		t.Errorf("owner's second claim (-want +got):\n%s", d)
	}
}

// testConversationTitleCleaned: every write of a title keeps it as
// store.CleanTitle returns it: controls, newlines and bidirectional
// overrides out, spaces collapsed, at most store.MaxTitleRunes runes.
func testConversationTitleCleaned(t *testing.T, f *fixture) {
	dirty := "  Trip\x00 to\tHuế\n\u202Egnp.exe \x1b[31m  "
	const clean = "Trip to Huế gnp.exe [31m"
	long := strings.Repeat("ắ", store.MaxTitleRunes+50)
	for _, tc := range []struct {
		name  string
		write func(c store.Conversation, title string) store.Conversation
	}{
		{"Put", func(c store.Conversation, title string) store.Conversation {
			c.Title = title
			f.putConversation(t, c)
			return c
		}},
		{"Claim", func(c store.Conversation, title string) store.Conversation {
			c.Title = title
			f.claim(t, c)
			return c
		}},
		{"Update", func(c store.Conversation, title string) store.Conversation {
			c.Title = "before"
			f.putConversation(t, c)
			return f.update(t, c, store.ConversationUpdate{Title: &title})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.write(f.newConversation("org", tc.name+"-dirty", "user"), dirty)
			if got := f.getConversation(t, c).Title; got != clean {
				t.Errorf("stored title %q, want %q", got, clean)
			}
			c = tc.write(f.newConversation("org", tc.name+"-long", "user"), long)
			got := f.getConversation(t, c).Title
			if n := utf8.RuneCountInString(got); n != store.MaxTitleRunes || !strings.HasPrefix(long, got) {
				t.Errorf("stored long title has %d runes (prefix of the given: %v), want its first %d", n, strings.HasPrefix(long, got), store.MaxTitleRunes)
			}
		})
	}
}

// testConversationUpdate: a title and a model change alone or together,
// nil fields stay, UpdatedAt is not stamped, and the answer is what is
// stored.
func testConversationUpdate(t *testing.T, f *fixture) {
	c := f.newConversation("org", "conv", "user")
	c.Model = "openai:gpt-4.1"
	f.putConversation(t, c)
	title, model, none := "Renamed", "ollama:qwen3:8b", ""
	steps := []struct {
		name string
		u    store.ConversationUpdate
		edit func(*store.Conversation)
	}{
		{"Title", store.ConversationUpdate{Title: &title}, func(c *store.Conversation) { c.Title = title }},
		{"Model", store.ConversationUpdate{Model: &model}, func(c *store.Conversation) { c.Model = model }},
		{"Nothing", store.ConversationUpdate{}, func(*store.Conversation) {}},
		{"Both", store.ConversationUpdate{Title: &none, Model: &none}, func(c *store.Conversation) { c.Title, c.Model = "", "" }},
	}
	want := c
	for _, s := range steps {
		s.edit(&want)
		if d := diff(want, f.update(t, c, s.u)); d != "" {
			t.Errorf("%s: UpdateConversation's answer (-want +got):\n%s", s.name, d)
		}
		if d := diff(want, f.getConversation(t, c)); d != "" {
			t.Errorf("%s: stored (-want +got):\n%s", s.name, d)
		}
	}
}

// testConversationUpdateOthers: another user's conversation, one of
// another organisation and a missing one are all ErrNotFound, and
// nothing changes.
func testConversationUpdateOthers(t *testing.T, f *fixture) {
	mine := f.newConversation("org", "conv", "user")
	f.putConversation(t, mine)
	title := "hijacked"
	u := store.ConversationUpdate{Title: &title, Model: &title}
	for name, call := range map[string]func() error{
		"OtherUser": func() error {
			_, err := f.UpdateConversation(t.Context(), mine.OrgID, f.id("intruder"), mine.ID, u)
			return err
		},
		"OtherOrg": func() error {
			_, err := f.UpdateConversation(t.Context(), f.id("other-org"), mine.UserID, mine.ID, u)
			return err
		},
		"Missing": func() error {
			_, err := f.UpdateConversation(t.Context(), mine.OrgID, mine.UserID, f.id("missing"), u)
			return err
		},
	} {
		wantNotFound(t, name, call())
	}
	if d := diff(mine, f.getConversation(t, mine)); d != "" {
		t.Errorf("stored after refused updates (-want +got):\n%s", d)
	}
	if _, err := f.GetConversation(t.Context(), mine.OrgID, f.id("missing")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an update of a missing conversation created it: %v", err)
	}
}
