package surface_test

import (
	"testing"

	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/turn"
)

func TestWhy(t *testing.T) {
	tests := []struct {
		name    string
		surface string
		want    surface.Capabilities
		reason  string
	}{
		{"web chat pins", "", surface.Capabilities(surface.Pin), ""},
		{"web chat named", surface.WebChat, surface.Capabilities(surface.Edit | surface.Delete), ""},
		{"web chat stickers", "", surface.Capabilities(surface.Stickers), "the web chat has no stickers"},
		{"web chat reply", "", surface.Capabilities(surface.React | surface.Reply), "the web chat has no replies to single messages: the agent's answer is the reply"},
		{"discord stickers", surface.Discord, surface.Capabilities(surface.Stickers | surface.Blocking), ""},
		{"unknown", "irc", surface.Capabilities(surface.List), `surface "irc" is not one Quiver knows`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := surface.Why(tt.surface, tt.want); got != tt.reason {
				t.Errorf("Why(%q, %s) = %q, want %q", tt.surface, tt.want, got, tt.reason)
			}
			got := surface.Requires(tt.want)(turn.Selection{Surface: tt.surface})
			if got != tt.reason {
				t.Errorf("Requires = %q, want %q", got, tt.reason)
			}
		})
	}
}

func TestAny(t *testing.T) {
	if got := surface.Any("", surface.Capabilities(surface.React|surface.Reply)); got != "" {
		t.Errorf("react or reply on the web chat: %q, want declared", got)
	}
	if got := surface.Any("", surface.Capabilities(surface.Blocking)); got == "" {
		t.Error("blocking on the web chat: declared, want a reason")
	}
}

func TestCapabilitiesString(t *testing.T) {
	sp, ok := surface.Lookup("")
	if !ok || sp.Name != surface.WebChat {
		t.Fatalf("Lookup(\"\") = %v, %v", sp.Name, ok)
	}
	if got, want := sp.Caps.String(), "list,react,pin,edit,delete,threads,cross_post"; got != want {
		t.Errorf("web chat caps = %q, want %q", got, want)
	}
}
