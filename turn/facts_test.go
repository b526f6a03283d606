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
