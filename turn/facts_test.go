package turn_test

import (
	"testing"
	"time"

	"github.com/quiverhq/quiver/turn"
)

func TestLoadZone(t *testing.T) {
	for _, name := range []string{"Asia/Ho_Chi_Minh", "America/Sao_Paulo", "UTC", "Europe/Paris"} {
		if _, err := turn.LoadZone(name); err != nil {
			t.Errorf("LoadZone(%q): %v", name, err)
		}
	}
	for _, name := range []string{"", "Local", "Mars/Olympus", "../etc/passwd", "+07:00"} {
		if _, err := turn.LoadZone(name); err == nil {
			t.Errorf("LoadZone(%q) accepted", name)
		}
	}
}

func TestLocation(t *testing.T) {
	loc, ok, err := turn.Caller{}.Location()
	if err != nil || ok || loc != time.UTC {
		t.Errorf("no zone: %v %v %v, want UTC, false", loc, ok, err)
	}
	loc, ok, err = turn.Caller{Timezone: "Asia/Tokyo"}.Location()
	if err != nil || !ok || loc.String() != "Asia/Tokyo" {
		t.Errorf("Asia/Tokyo: %v %v %v", loc, ok, err)
	}
}

func TestAllows(t *testing.T) {
	a := turn.Agent{Allow: []string{"web_search", "memory"}}
	tests := []struct {
		name, family string
		want         bool
	}{
		{"web_search", "web", true},
		{"save_memory", "memory", true},
		{"fetch_url", "web", false},
		{"memory", "", true},
		{"x", "", false},
	}
	for _, tc := range tests {
		if got := a.Allows(tc.name, tc.family); got != tc.want {
			t.Errorf("Allows(%q, %q) = %v, want %v", tc.name, tc.family, got, tc.want)
		}
	}
	if (turn.Agent{}).Allows("web_search", "web") {
		t.Error("empty allowlist allowed a tool")
	}
}
