package ids_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/ids"
)

// TestSlug: letters and digits of any script, lower-cased, joined by one
// '-' per run of anything else, none at the ends, at most 64 runes; def
// when nothing is left.
func TestSlug(t *testing.T) {
	long := strings.Repeat("ă", 70)
	tests := []struct {
		name, in, def, want string
	}{
		{"empty gives def", "", "cli", "cli"},
		{"only punctuation gives def", " -- !? ", "default", "default"},
		{"lower-cased", "Ana", "cli", "ana"},
		{"runs of others are one dash", "Ana   Lima", "cli", "ana-lima"},
		{"no dash at the ends", "  Acme Corp. ", "default", "acme-corp"},
		{"punctuation between", "a.b/c\\d", "x", "a-b-c-d"},
		{"any script", "Nguyễn Văn A", "cli", "nguyễn-văn-a"},
		{"digits kept", "Team 42", "x", "team-42"},
		{"cut to 64 runes", long, "x", strings.Repeat("ă", 64)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids.Slug(tc.in, tc.def); got != tc.want {
				t.Errorf("Slug(%q, %q) = %q, want %q", tc.in, tc.def, got, tc.want)
			}
		})
	}
}
