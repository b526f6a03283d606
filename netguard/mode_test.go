package netguard

import "testing"

// TestParseMode: only "self-hosted" names SelfHosted; every other name,
// empty and mistyped ones included, is Public.
func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Mode
	}{
		{"self-hosted", SelfHosted},
		{"public", Public},
		{"", Public},
		{"Self-Hosted", Public},
		{"selfhosted", Public},
		{" self-hosted", Public},
	} {
		if got := ParseMode(tc.name); got != tc.want {
			t.Errorf("ParseMode(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
