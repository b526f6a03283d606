package scheduler_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quiverhq/quiver/scheduler"
	"github.com/quiverhq/quiver/store"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("zone %s: %v", name, err)
	}
	return loc
}

func TestPlan(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, paris) // a Friday
	tests := []struct {
		name      string
		when      scheduler.When
		kind      string
		first     time.Time
		every     time.Duration
		wantError bool
	}{
		{"In", scheduler.When{In: "10m"}, store.ScheduleOnce, now.Add(10 * time.Minute), 0, false},
		{"InDays", scheduler.When{In: "1d2h"}, store.ScheduleOnce, now.Add(26 * time.Hour), 0, false},
		{"AtOffset", scheduler.When{At: "2026-12-05T09:00:00+01:00"}, store.ScheduleOnce, time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC), 0, false},
		{"AtWallClock", scheduler.When{At: "2026-12-05 09:00"}, store.ScheduleOnce, time.Date(2026, 12, 5, 9, 0, 0, 0, paris), 0, false},
		{"Every", scheduler.When{Every: "3h"}, store.ScheduleInterval, now.Add(3 * time.Hour), 3 * time.Hour, false},
		{"CronFriday", scheduler.When{Cron: "0 18 * * 5"}, store.ScheduleCron, time.Date(2026, 12, 4, 18, 0, 0, 0, paris), 0, false},
		{"Descriptor", scheduler.When{Cron: "@daily"}, store.ScheduleCron, time.Date(2026, 12, 5, 0, 0, 0, 0, paris), 0, false},
		{"Past", scheduler.When{At: "2026-12-04 09:00"}, "", time.Time{}, 0, true},
		{"TooFar", scheduler.When{In: "800d"}, "", time.Time{}, 0, true},
		{"ShortInterval", scheduler.When{Every: "1m"}, "", time.Time{}, 0, true},
		{"CronTooOften", scheduler.When{Cron: "* * * * *"}, "", time.Time{}, 0, true},
		{"CronSeconds", scheduler.When{Cron: "0 0 9 * * *"}, "", time.Time{}, 0, true},
		{"CronZone", scheduler.When{Cron: "CRON_TZ=UTC 0 9 * * *"}, "", time.Time{}, 0, true},
		{"CronEvery", scheduler.When{Cron: "@every 1h"}, "", time.Time{}, 0, true},
		{"CronNever", scheduler.When{Cron: "0 0 30 2 *"}, "", time.Time{}, 0, true},
		{"Two", scheduler.When{In: "1h", Every: "2h"}, "", time.Time{}, 0, true},
		{"None", scheduler.When{}, "", time.Time{}, 0, true},
		{"Garbage", scheduler.When{In: "soon"}, "", time.Time{}, 0, true},
		{"SkippedWallClock", scheduler.When{At: "2027-03-28 02:30"}, "", time.Time{}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, first, err := scheduler.Plan(tc.when, paris, now)
			if tc.wantError {
				if !errors.Is(err, scheduler.ErrWhen) {
					t.Fatalf("Plan = %+v, %v; want ErrWhen", s, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if s.Kind != tc.kind || !first.Equal(tc.first) || s.Every != tc.every || s.Timezone != "Europe/Paris" {
				t.Errorf("Plan = %+v first %v; want kind %s first %v every %v", s, first.In(paris), tc.kind, tc.first, tc.every)
			}
			if _, err := store.CheckTaskSchedule(s); err != nil {
				t.Errorf("the planned schedule does not pass the store's check: %v", err)
			}
		})
	}
}

// TestNextAcrossDaylightSaving follows tasks over the nights the clocks
// change in Paris (2026-03-29 02:00 → 03:00, 2026-10-25 03:00 → 02:00)
// and New York.
func TestNextAcrossDaylightSaving(t *testing.T) {
	paris, ny := zone(t, "Europe/Paris"), zone(t, "America/New_York")
	tests := []struct {
		name string
		spec string
		loc  *time.Location
		from time.Time
		want []time.Time
	}{
		{"DailyKeepsWallClockIntoSummer", "0 9 * * *", paris, time.Date(2026, 3, 28, 10, 0, 0, 0, paris), []time.Time{
			time.Date(2026, 3, 29, 7, 0, 0, 0, time.UTC), time.Date(2026, 3, 30, 7, 0, 0, 0, time.UTC)}},
		{"DailyKeepsWallClockIntoWinter", "0 9 * * *", paris, time.Date(2026, 10, 24, 10, 0, 0, 0, paris), []time.Time{
			time.Date(2026, 10, 25, 8, 0, 0, 0, time.UTC), time.Date(2026, 10, 26, 8, 0, 0, 0, time.UTC)}},
		{"SkippedTimeRunsAtTheJump", "30 2 * * *", paris, time.Date(2026, 3, 28, 12, 0, 0, 0, paris), []time.Time{
			time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC), // 03:00 CEST, the first instant after the gap
			time.Date(2026, 3, 30, 0, 30, 0, 0, time.UTC)}},
		{"RepeatedTimeRunsOnce", "30 1 * * *", ny, time.Date(2026, 10, 31, 12, 0, 0, 0, ny), []time.Time{
			time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC),   // 01:30 EDT
			time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC)}}, // not 01:30 EST the same night
		{"RepeatedTimeRunsOnceParis", "30 2 * * *", paris, time.Date(2026, 10, 24, 12, 0, 0, 0, paris), []time.Time{
			time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), time.Date(2026, 10, 26, 1, 30, 0, 0, time.UTC)}},
		{"HalfHourlyKeepsElapsedTime", "*/30 * * * *", paris, time.Date(2026, 10, 25, 1, 50, 0, 0, paris), []time.Time{
			time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC),
			time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC)}},
		{"WeeklyFriday", "0 18 * * 5", paris, time.Date(2026, 3, 25, 12, 0, 0, 0, paris), []time.Time{
			time.Date(2026, 3, 27, 17, 0, 0, 0, time.UTC), time.Date(2026, 4, 3, 16, 0, 0, 0, time.UTC)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			task := store.Task{Kind: store.ScheduleCron, Spec: tc.spec, Timezone: tc.loc.String()}
			at := tc.from
			for i, want := range tc.want {
				got := scheduler.Next(task, at)
				if !got.Equal(want) {
					t.Fatalf("run %d after %v: %v (%v), want %v (%v)", i+1, at.In(tc.loc), got.In(tc.loc), got, want.In(tc.loc), want)
				}
				at = got
			}
		})
	}
}

func TestNextInterval(t *testing.T) {
	base := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	task := store.Task{Kind: store.ScheduleInterval, Every: 3 * time.Hour, NextRunAt: base, Timezone: "UTC"}
	for _, tc := range []struct {
		name string
		now  time.Time
		want time.Time
	}{
		{"OnTime", base, base.Add(3 * time.Hour)},
		{"LateCollapsesMissedRuns", base.Add(10 * time.Hour), base.Add(12 * time.Hour)},
		{"OnTheNextStep", base.Add(6 * time.Hour), base.Add(9 * time.Hour)},
	} {
		if got := scheduler.Next(task, tc.now); !got.Equal(tc.want) {
			t.Errorf("%s: Next = %v, want %v", tc.name, got, tc.want)
		}
	}
	once := store.Task{Kind: store.ScheduleOnce, Spec: base.Format(time.RFC3339), Timezone: "UTC"}
	if got := scheduler.Next(once, base); !got.IsZero() {
		t.Errorf("a one-off task's next run: %v, want none", got)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"10m": 10 * time.Minute, "3d": 72 * time.Hour, "1d12h": 36 * time.Hour, " 2H ": 2 * time.Hour} {
		if got, err := scheduler.ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0m", "-5m", "d", "xd", "1w", "3dd"} {
		if _, err := scheduler.ParseDuration(in); !errors.Is(err, scheduler.ErrWhen) {
			t.Errorf("ParseDuration(%q): %v, want ErrWhen", in, err)
		}
	}
}

func FuzzPlan(f *testing.F) {
	for _, s := range []string{"0 9 * * 5", "@daily", "*/10 * * * *", "30 2 * * *", "0 0 29 2 *", "1-5/2 * * * MON"} {
		f.Add(s, "3h", "2026-12-05 09:00")
	}
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr, every, at string) {
		paris, _ := time.LoadLocation("Europe/Paris")
		for _, w := range []scheduler.When{{Cron: expr}, {Every: every}, {At: at}, {In: every}} {
			s, first, err := scheduler.Plan(w, paris, now)
			if err != nil {
				if !errors.Is(err, scheduler.ErrWhen) {
					t.Fatalf("Plan(%+v): error %v is not ErrWhen", w, err)
				}
				continue
			}
			if !first.After(now) {
				t.Fatalf("Plan(%+v): first run %v is not after now", w, first)
			}
			if _, err := store.CheckTaskSchedule(s); err != nil {
				t.Fatalf("Plan(%+v) = %+v, which the store refuses: %v", w, s, err)
			}
			task := store.Task{Kind: s.Kind, Spec: s.Spec, Every: s.Every, Timezone: s.Timezone, NextRunAt: first}
			if n := scheduler.Next(task, first); s.Kind != store.ScheduleOnce && !n.IsZero() && !n.After(first) {
				t.Fatalf("Next after %v is %v, not later", first, n)
			}
		}
	})
}
