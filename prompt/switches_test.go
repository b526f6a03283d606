package prompt_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/turn"
)

// TestCapabilitiesFollowTheToolset: a switch that gates a family answers
// capability:NAME exactly as tool_family answers for its family, whatever
// the switch is set to; a switch with no tool behind it is never on.
func TestCapabilitiesFollowTheToolset(t *testing.T) {
	const src = "{{if capability:web_search}}C{{/if}}{{if tool_family:web_search}}F{{/if}}{{if tool:web_search}}T{{/if}}" +
		"|{{if capability:self_teaching}}M{{/if}}|{{if capability:image_generation}}I{{/if}}"
	tests := []struct {
		name     string
		allow    []string
		switches map[string]bool
		want     string
	}{
		{"allowed, switches unset", []string{"web_search", "memory"}, nil, "CFT|M|"},
		{"allowed, switches on", []string{"web_search", "memory"}, map[string]bool{"web_search": true, "self_teaching": true, "image_generation": true}, "CFT|M|"},
		{"allowed, switches off", []string{"web_search", "memory"}, map[string]bool{"web_search": false, "self_teaching": false}, "||"},
		{"switches on, nothing allowed", nil, map[string]bool{"web_search": true, "self_teaching": true}, "||"},
	}
	c := richCatalog()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := turnFacts(src, tc.allow, tc.switches, true)
			sys, err := prompt.System(f, c.Select(f))
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(sys.Text, "\n")
			if first != tc.want {
				t.Errorf("rendered %q, want %q", first, tc.want)
			}
		})
	}
}

// TestTimeAwarenessSwitch: set off, the context message carries no clock
// and capability:time_awareness is off; unset or on, both are there.
func TestTimeAwarenessSwitch(t *testing.T) {
	at := time.Date(2026, 11, 29, 23, 3, 0, 0, time.UTC)
	tests := []struct {
		name     string
		switches map[string]bool
		want     string
		wantCap  string
	}{
		{"unset", nil, "You are talking with Ana.\nCurrent local time: Monday 2026-11-30 06:03 (Asia/Ho_Chi_Minh, UTC+07:00).", "clock"},
		{"on", map[string]bool{"time_awareness": true}, "You are talking with Ana.\nCurrent local time: Monday 2026-11-30 06:03 (Asia/Ho_Chi_Minh, UTC+07:00).", "clock"},
		{"off", map[string]bool{"time_awareness": false}, "You are talking with Ana.", "no clock"},
	}
	c := richCatalog()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := turnFacts("{{if capability:time_awareness}}clock{{else}}no clock{{/if}}", nil, tc.switches, true)
			f.Start, f.Caller.Timezone = at, "Asia/Ho_Chi_Minh"
			req, err := prompt.Assemble(f, c.Select(f))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, req.Context); d != "" {
				t.Errorf("context (-want +got):\n%s", d)
			}
			if first, _, _ := strings.Cut(req.System, "\n"); first != tc.wantCap {
				t.Errorf("capability:time_awareness rendered %q, want %q", first, tc.wantCap)
			}
		})
	}
	// The timezone is still checked: bad input is an error, clock or not.
	f := turn.Facts{Caller: turn.Caller{Timezone: "Mars/Olympus"}, Agent: turn.Agent{Switches: map[string]bool{"time_awareness": false}}}
	if _, err := prompt.ContextMessage(f); err == nil {
		t.Error("unknown zone accepted with the clock off")
	}
}
