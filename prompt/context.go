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
	return b.String(), nil
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
