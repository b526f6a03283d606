package clock

import (
	"testing"
	"time"
)

func TestParseOffset(t *testing.T) {
	cases := []struct {
		name, in string
		want     time.Duration
		bad      bool
	}{
		{"unset", "", 0, false},
		{"a year", "8760h", 8760 * time.Hour, false},
		{"backwards", "-36h", -36 * time.Hour, false},
		{"minutes", "90m", 90 * time.Minute, false},
		{"no unit", "8760", 0, true},
		{"words", "a year", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseOffset(tc.in)
			if (err != nil) != tc.bad || got != tc.want {
				t.Fatalf("ParseOffset(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
			}
		})
	}
}

// TestNowFollowsOffset: Now is the wall clock moved by the offset the
// environment asks for, whatever that offset is in this run.
func TestNowFollowsOffset(t *testing.T) {
	before := time.Now()
	got := Now()
	after := time.Now()
	shift := Offset()
	if got.Before(before.Add(shift)) || got.After(after.Add(shift)) {
		t.Fatalf("Now() = %v, want between %v and %v (offset %v)", got, before.Add(shift), after.Add(shift), shift)
	}
}
