package prompt_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/prompt"
)

// TestShortTermMemoryInContextOnly: a turn's short-term memory is in its
// context message, after the clock, and changes neither the system prompt
// nor the definitions (the prompt's cache-stable prefix), whatever it
// says; a turn without one shows none.
func TestShortTermMemoryInContextOnly(t *testing.T) {
	c := catalog()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	without := facts("Ana", "UTC", at)
	with := without
	with.ShortTermMemory = "Task: plan the offsite.\nOpen: the venue."
	r0, err := prompt.Assemble(without, c.Select(without))
	if err != nil {
		t.Fatal(err)
	}
	r1, err := prompt.Assemble(with, c.Select(with))
	if err != nil {
		t.Fatal(err)
	}
	if r0.System != r1.System {
		t.Errorf("the short-term memory changed the system prompt:\n%q\n%q", r0.System, r1.System)
	}
	d0, _ := json.Marshal(r0.Tools)
	d1, _ := json.Marshal(r1.Tools)
	if string(d0) != string(d1) {
		t.Error("the short-term memory changed the definitions")
	}
	if strings.Contains(r1.System, "plan the offsite") {
		t.Error("the system prompt holds the short-term memory")
	}
	want := r0.Context + "\n\nShort-term memory of this conversation (your working notes, kept with update_short_term_memory; replace them whole when they change):\nTask: plan the offsite.\nOpen: the venue."
	if r1.Context != want {
		t.Errorf("context message:\n%q\nwant\n%q", r1.Context, want)
	}
	if strings.Contains(r0.Context, "Short-term memory") {
		t.Errorf("a turn without short-term memory shows one: %q", r0.Context)
	}
	with.Place.ChannelID = "general"
	with.Agent.Switches = map[string]bool{"time_awareness": false}
	got, err := prompt.ContextMessage(with)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Short-term memory of this channel") || strings.Contains(got, "time:") {
		t.Errorf("with a channel and no clock: %q", got)
	}
}
