package chat

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

//go:embed message_metadata.md
var metadataDescription string

// MetadataInput is message_metadata's arguments.
type MetadataInput struct {
	Limit int `json:"limit,omitempty" jsonschema:"how many of the latest messages to list (default 20, at most 50)"`
}

func metadataTool(cfg Config) *tool.Tool {
	const name = "message_metadata"
	want := surface.Capabilities(surface.List)
	return tool.New(tool.Spec{
		Name: name, Family: FamilyMetadata, Macros: []string{"message_metadata_tool", "timestamp_refresh_tool"},
		Description: metadataDescription, Access: tool.Read, Requires: surface.Requires(want),
		Limits: []tool.Limit{{Name: "messages", Value: MaxMetadataMessages}, {Name: "preview_chars", Value: MaxPreviewRunes}},
		Tune: func(s *jsonschema.Schema) {
			lim := s.Properties["limit"]
			lim.Minimum, lim.Maximum = ptr(1.0), ptr(float64(MaxMetadataMessages))
		},
	}, func(ctx context.Context, sc tool.Scope, in MetadataInput) (string, error) {
		sf, err := resolve(cfg, sc, name, want)
		if err != nil {
			return "", err
		}
		limit := in.Limit
		if limit <= 0 {
			limit = DefaultMetadataMessages
		}
		ms, err := sf.Recent(ctx, sc, min(limit, MaxMetadataMessages))
		if err != nil {
			return "", refusal(name, "", err)
		}
		return listing(ms, sc.Timezone), nil
	})
}

func ptr[T any](v T) *T { return &v }

// listing writes messages for the model, one line each, times in the
// zone named tz (UTC when it is "" or unknown).
func listing(ms []surface.Message, tz string) string {
	loc, zone := zoneOf(tz)
	if len(ms) == 0 {
		return "No messages yet in this conversation."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Latest %d messages, oldest first (times in %s):\n", len(ms), zone)
	for _, m := range ms {
		fmt.Fprintf(&b, "- id %s · %s · %s", m.ID, m.At.In(loc).Format("Mon 2 Jan 2006 15:04"), m.Author.Name)
		if m.Author.Agent {
			b.WriteString(" (you)")
		}
		b.WriteString(": ")
		if m.Deleted {
			b.WriteString("[deleted]")
		} else {
			b.WriteString(preview(m.Text))
		}
		writeMarks(&b, m)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// zoneOf loads tz, falling back to UTC.
func zoneOf(tz string) (*time.Location, string) {
	if tz != "" {
		if loc, err := turn.LoadZone(tz); err == nil {
			return loc, tz
		}
	}
	return time.UTC, "UTC"
}

func writeMarks(b *strings.Builder, m surface.Message) {
	var marks []string
	for _, r := range m.Reactions {
		s := fmt.Sprintf("%s×%d", r.Emoji, r.Count)
		if r.Mine {
			s += " (yours)"
		}
		marks = append(marks, s)
	}
	if m.Pinned {
		marks = append(marks, "pinned")
	}
	if m.Edited && !m.Deleted {
		marks = append(marks, "edited")
	}
	if m.Thread != "" {
		marks = append(marks, "thread "+m.Thread)
	}
	if len(marks) > 0 {
		b.WriteString(" [" + strings.Join(marks, ", ") + "]")
	}
}

// preview is text on one line, at most MaxPreviewRunes runes.
func preview(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= MaxPreviewRunes {
		return text
	}
	r := []rune(text)
	return string(r[:MaxPreviewRunes]) + "…"
}
