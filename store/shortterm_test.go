package store

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzCheckShortTerm checks CheckShortTerm's contract on any fields: it
// never panics; what it refuses wraps ErrShortTermInvalid; what it
// accepts has valid, non-empty keys, a trimmed plain text of at most
// MaxShortTermRunes runes and a UTC UpdatedAt.
func FuzzCheckShortTerm(f *testing.F) {
	f.Add("org", "channel:general", "conv", "Task: plan.\nOpen: venue.")
	f.Add("org", "conversation:c1", "", "  ")
	f.Add("o\x00", "t", "c", "x")
	f.Add("org", "t", "c\xff", strings.Repeat("é", MaxShortTermRunes+1))
	f.Fuzz(func(t *testing.T, org, thread, conv, text string) {
		in := ShortTerm{OrgID: org, Thread: thread, ConversationID: conv, Text: text,
			UpdatedAt: time.Unix(1, 0).In(time.FixedZone("x", 3600))}
		got, err := CheckShortTerm(in)
		if err != nil {
			if !errors.Is(err, ErrShortTermInvalid) {
				t.Fatalf("CheckShortTerm refused with %v, which does not wrap ErrShortTermInvalid", err)
			}
			return
		}
		if got.OrgID == "" || got.Thread == "" || !ValidBlobKey(got.OrgID) || !ValidBlobKey(got.Thread) || !ValidBlobKey(got.ConversationID) {
			t.Errorf("accepted keys %q %q %q", got.OrgID, got.Thread, got.ConversationID)
		}
		if n := utf8.RuneCountInString(got.Text); n > MaxShortTermRunes || got.Text != strings.TrimSpace(got.Text) || PlainText(got.Text) != got.Text {
			t.Errorf("accepted text of %d runes, %q", n, got.Text)
		}
		if got.UpdatedAt.Location() != time.UTC || !got.UpdatedAt.Equal(in.UpdatedAt) {
			t.Errorf("UpdatedAt = %v", got.UpdatedAt)
		}
	})
}
