package prompt

import (
	"fmt"
	"strings"
	"time"

	"github.com/quiverhq/quiver/turn"
)

// timeAwareness is the switch that, set off, keeps the clock out of the
// context message.
const timeAwareness = "time_awareness"

// clockShown reports whether the context message carries the time: unless
// the time_awareness switch is set off.
func clockShown(f turn.Facts) bool { return !f.Agent.Off(timeAwareness) }

// ContextMessage renders the message that opens a turn: who the model is
// talking with (display name, department, organisation — never ids, emails
// or billing data) and the current local time to the minute with the IANA
// zone and UTC offset. A turn without a timezone uses UTC and says so. With
// the time_awareness switch set off, the time line is left out (an unknown
// timezone name is still an error).
func ContextMessage(f turn.Facts) (string, error) {
	return contextMessage(f, turn.LoadZone)
}

// contextMessage is ContextMessage with zone names resolved by load.
func contextMessage(f turn.Facts, load func(string) (*time.Location, error)) (string, error) {
	loc, known := time.UTC, f.Caller.Timezone != ""
	if known {
		var err error
		if loc, err = load(f.Caller.Timezone); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	b.WriteString(who(f.Caller))
	if clockShown(f) {
		b.WriteString("\n")
		now := f.Start.In(loc)
		stamp := now.Format("Monday 2006-01-02 15:04")
		if known {
			fmt.Fprintf(&b, "Current local time: %s (%s, UTC%s).", stamp, loc.String(), now.Format("-07:00"))
		} else {
			fmt.Fprintf(&b, "Current time: %s UTC. The caller's timezone is unknown, so their local date and time may differ.", stamp)
		}
	}
	writeShortTerm(&b, f)
	writeScheduled(&b, f, loc)
	return b.String(), nil
}

// writeScheduled says, for a scheduled task's run, which task it is,
// when it was due and, when it started late (the server was not running
// at the time), how late: the model is told to say so.
func writeScheduled(b *strings.Builder, f turn.Facts, loc *time.Location) {
	sc := f.Scheduled
	if sc == nil {
		return
	}
	title := oneLine(sc.Title)
	if title == "" {
		title = "untitled"
	}
	fmt.Fprintf(b, "\n\nThis turn runs a task the caller scheduled (%q, due %s). The message is the task's instruction, not something they just wrote; they see your answer in this conversation. This turn cannot schedule further tasks.",
		title, sc.Due.In(loc).Format("Monday 2006-01-02 15:04 MST"))
	if sc.Late > 0 {
		fmt.Fprintf(b, " It runs %s late, because Quiver was not running when it was due: say so briefly.", lateness(sc.Late))
	}
}

// lateness writes d in hours and minutes ("5 h 30 min", "2 min").
func lateness(d time.Duration) string {
	d = d.Round(time.Minute)
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case h > 0 && m > 0:
		return fmt.Sprintf("%d h %d min", h, m)
	case h > 0:
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d min", max(m, 1))
}

// writeShortTerm adds the turn's short-term memory, when it has one: in
// the context message, which changes every turn anyway, so that the
// system prompt's cached prefix never does because of it.
func writeShortTerm(b *strings.Builder, f turn.Facts) {
	text := strings.TrimSpace(f.ShortTermMemory)
	if text == "" {
		return
	}
	where := "conversation"
	if f.Place.ChannelID != "" {
		where = "channel"
	}
	fmt.Fprintf(b, "\n\nShort-term memory of this %s (your working notes, kept with update_short_term_memory; replace them whole when they change):\n%s", where, text)
}

func who(c turn.Caller) string {
	name := oneLine(c.DisplayName)
	if name == "" {
		name = "an unnamed user"
	}
	var about []string
	if d := oneLine(c.Department); d != "" {
		about = append(about, d)
	}
	if o := oneLine(c.Organisation); o != "" {
		about = append(about, o)
	}
	if len(about) == 0 {
		return fmt.Sprintf("You are talking with %s.", name)
	}
	return fmt.Sprintf("You are talking with %s (%s).", name, strings.Join(about, ", "))
}

// oneLine collapses whitespace so a display name cannot add lines of its own
// to the context message.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
