// Package scheduler runs people's scheduled tasks: it reads when a task
// is due (one-off instants, cron expressions and plain intervals, each in
// the requester's IANA time zone), claims due runs through the database
// (store.Tasks' leases, so several replicas run each due run once at a
// time) and hands each to a Runner, which runs it as a new turn. It
// reads the injected clock only, never the database's.
package scheduler

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/quiverhq/quiver/store"
)

// Bounds of a schedule a person or a model asks for.
const (
	// MinInterval is the shortest plain interval and the shortest gap a
	// cron expression may leave between runs.
	MinInterval = 5 * time.Minute
	// MaxAhead is how far ahead a one-off task may be.
	MaxAhead = 2 * 366 * 24 * time.Hour
)

// ErrWhen reports a schedule that cannot be read or breaks a bound; the
// message says which, for the person or the model to correct.
var ErrWhen = errors.New("invalid schedule")

// When is a schedule as asked for: exactly one field set.
type When struct {
	// At is a one-off instant: RFC 3339 with an offset
	// ("2026-12-05T09:00:00+01:00"), or a wall-clock time in the zone
	// ("2026-12-05 09:00", "2026-12-05T09:00").
	At string `json:"at,omitempty"`
	// In is a one-off delay from now: a duration such as "10m", "2h30m"
	// or "3d".
	In string `json:"in,omitempty"`
	// Every is a plain interval from the first run ("3h", "1d").
	Every string `json:"every,omitempty"`
	// Cron is a five-field cron expression ("0 9 * * 5") or a
	// descriptor ("@daily"), read on the zone's wall clock.
	Cron string `json:"cron,omitempty"`
}

// cronParser reads five-field expressions and descriptors. robfig/cron
// is the parser Go schedulers share (standard fields, descriptors, the
// zone's wall clock across daylight-saving changes); Quiver runs its own
// loop over it, so only the parser and its Next are used.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Plan reads w in zone at now and returns the task's schedule and its
// first due time.
func Plan(w When, zone *time.Location, now time.Time) (store.TaskSchedule, time.Time, error) {
	set := 0
	for _, f := range []string{w.At, w.In, w.Every, w.Cron} {
		if strings.TrimSpace(f) != "" {
			set++
		}
	}
	if set != 1 {
		return store.TaskSchedule{}, time.Time{}, fmt.Errorf("%w: give exactly one of at, in, every or cron", ErrWhen)
	}
	name := zone.String()
	switch {
	case w.At != "" || w.In != "":
		at, err := oneOff(w, zone, now)
		if err != nil {
			return store.TaskSchedule{}, time.Time{}, err
		}
		return store.TaskSchedule{Kind: store.ScheduleOnce, Spec: at.UTC().Format(time.RFC3339Nano), Timezone: name}, at.UTC(), nil
	case w.Every != "":
		d, err := ParseDuration(w.Every)
		if err != nil {
			return store.TaskSchedule{}, time.Time{}, err
		}
		if d < MinInterval || d > 366*24*time.Hour {
			return store.TaskSchedule{}, time.Time{}, fmt.Errorf("%w: an interval is from %v to a year, not %v", ErrWhen, MinInterval, d)
		}
		d = d.Truncate(time.Second)
		return store.TaskSchedule{Kind: store.ScheduleInterval, Every: d, Timezone: name}, now.Add(d).UTC(), nil
	default:
		expr := strings.Join(strings.Fields(w.Cron), " ")
		sched, err := parseCron(expr)
		if err != nil {
			return store.TaskSchedule{}, time.Time{}, err
		}
		if err := checkGap(sched, zone, now); err != nil {
			return store.TaskSchedule{}, time.Time{}, err
		}
		first := cronNext(sched, wallClockHours(expr), now, zone)
		if first.IsZero() {
			return store.TaskSchedule{}, time.Time{}, fmt.Errorf("%w: %q never matches a date", ErrWhen, expr)
		}
		return store.TaskSchedule{Kind: store.ScheduleCron, Spec: expr, Timezone: name}, first.UTC(), nil
	}
}

// oneOff is the instant of a one-off When, refused when it is not after
// now or more than MaxAhead ahead.
func oneOff(w When, zone *time.Location, now time.Time) (time.Time, error) {
	var at time.Time
	if w.In != "" {
		d, err := ParseDuration(w.In)
		if err != nil {
			return time.Time{}, err
		}
		at = now.Add(d)
	} else {
		var err error
		if at, err = parseInstant(strings.TrimSpace(w.At), zone); err != nil {
			return time.Time{}, err
		}
	}
	switch {
	case !at.After(now):
		return time.Time{}, fmt.Errorf("%w: %s is not in the future (now is %s)", ErrWhen,
			at.In(zone).Format("2006-01-02 15:04 MST"), now.In(zone).Format("2006-01-02 15:04 MST"))
	case at.Sub(now) > MaxAhead:
		return time.Time{}, fmt.Errorf("%w: a one-off task is at most two years ahead", ErrWhen)
	}
	return at, nil
}

// instantLayouts are the wall-clock forms At takes besides RFC 3339.
var instantLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

// parseInstant reads an RFC 3339 instant, or a wall-clock time in zone
// (a time the zone skips, in a daylight-saving gap, is refused).
func parseInstant(s string, zone *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range instantLayouts {
		t, err := time.ParseInLocation(layout, s, zone)
		if err != nil {
			continue
		}
		if t.Format(layout) != s {
			return time.Time{}, fmt.Errorf("%w: %s does not exist in %s (the clocks skip it)", ErrWhen, s, zone)
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%w: read %q as neither RFC 3339 nor YYYY-MM-DD HH:MM", ErrWhen, s)
}

// ParseDuration reads a duration as Go writes them ("90m", "2h30m") with
// days besides ("3d", "1d12h"); it must be positive.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	var total time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		days, err := strconv.Atoi(s[:i])
		if err != nil || days < 0 || days > 800 {
			return 0, fmt.Errorf("%w: read %q as a duration such as 10m, 3h or 2d", ErrWhen, s)
		}
		total, s = time.Duration(days)*24*time.Hour, s[i+1:]
	}
	if s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%w: read %q as a duration such as 10m, 3h or 2d", ErrWhen, s)
		}
		total += d
	}
	if total <= 0 {
		return 0, fmt.Errorf("%w: a duration must be positive", ErrWhen)
	}
	return total, nil
}

// parseCron parses a cron expression, refusing the seconds field and
// time zone prefixes (the task's zone is the requester's).
func parseCron(expr string) (cron.Schedule, error) {
	if expr == "" || len(expr) > store.MaxTaskSpecBytes {
		return nil, fmt.Errorf("%w: a cron expression is 1 to %d characters", ErrWhen, store.MaxTaskSpecBytes)
	}
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, fmt.Errorf("%w: give the time zone separately, not in the expression", ErrWhen)
	}
	if strings.HasPrefix(expr, "@every") {
		return nil, fmt.Errorf("%w: for a plain interval use every, not @every", ErrWhen)
	}
	sched, err := cronParser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v (five fields: minute hour day-of-month month day-of-week)", ErrWhen, expr, err)
	}
	return sched, nil
}

// checkGap refuses an expression that runs more often than MinInterval:
// the gaps between its next few runs from now.
func checkGap(sched cron.Schedule, zone *time.Location, now time.Time) error {
	t := sched.Next(now.In(zone))
	for range 50 {
		if t.IsZero() {
			return nil
		}
		n := sched.Next(t)
		if !n.IsZero() && n.Sub(t) < MinInterval {
			return fmt.Errorf("%w: it runs %v apart; tasks run at most every %v", ErrWhen, n.Sub(t), MinInterval)
		}
		t = n
	}
	return nil
}

// Next is when t is next due after now: the first time of its schedule
// later than now (so runs missed while no scheduler ran collapse into the
// one that runs late), zero for a one-off task (it is done) or a schedule
// that no longer reads (the task stops rather than run wrongly).
func Next(t store.Task, now time.Time) time.Time {
	zone, err := time.LoadLocation(t.Timezone)
	if err != nil {
		zone = time.UTC
	}
	switch t.Kind {
	case store.ScheduleCron:
		sched, err := parseCron(t.Spec)
		if err != nil {
			return time.Time{}
		}
		return cronNext(sched, wallClockHours(t.Spec), now, zone).UTC()
	case store.ScheduleInterval:
		if t.Every <= 0 {
			return time.Time{}
		}
		base := t.NextRunAt
		if base.IsZero() || base.After(now) {
			return base.UTC()
		}
		steps := now.Sub(base)/t.Every + 1
		return base.Add(steps * t.Every).UTC()
	}
	return time.Time{}
}

// Describe says in words when a schedule runs, for lists and the
// model: "once at 2026-12-05 09:00 CET", "every 3h0m0s", "cron 0 9 * * 5
// (Europe/Paris)".
func Describe(t store.Task) string {
	zone, err := time.LoadLocation(t.Timezone)
	if err != nil {
		zone = time.UTC
	}
	switch t.Kind {
	case store.ScheduleOnce:
		at, err := time.Parse(time.RFC3339Nano, t.Spec)
		if err != nil {
			return "once"
		}
		return "once at " + at.In(zone).Format("2006-01-02 15:04 MST")
	case store.ScheduleInterval:
		return "every " + FormatDuration(t.Every)
	case store.ScheduleCron:
		return "cron " + t.Spec + " (" + t.Timezone + ")"
	}
	return t.Kind
}

// FormatDuration writes d as days, hours and minutes ("1d 2h", "45m").
func FormatDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	d = d.Round(time.Minute)
	var parts []string
	if days := d / (24 * time.Hour); days > 0 {
		parts = append(parts, strconv.Itoa(int(days))+"d")
		d -= days * 24 * time.Hour
	}
	if h := d / time.Hour; h > 0 {
		parts = append(parts, strconv.Itoa(int(h))+"h")
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		parts = append(parts, strconv.Itoa(int(m))+"m")
	}
	return strings.Join(parts, " ")
}

// wallClockHours reports whether a cron expression names its hours (a
// daily or weekly time, "30 2 * * *") rather than every hour or a step
// of them ("*/30 * * * *", "0 */2 * * *"): the expressions the
// daylight-saving rules of cronNext apply to, as cron has always done.
func wallClockHours(expr string) bool {
	if strings.HasPrefix(expr, "@") {
		return expr != "@hourly"
	}
	f := strings.Fields(expr)
	return len(f) == 5 && !strings.ContainsAny(f[1], "*/")
}

// cronNext is sched's first time after now in zone, with the rules
// people expect of a task at a wall-clock time (wall true) across
// daylight-saving changes: a time the clocks skip in spring runs once at
// the jump (02:30 on the night the clocks go from 02:00 to 03:00 runs at
// 03:00), and a time the clocks repeat in autumn runs once, at its first
// occurrence. robfig/cron's Next alone skips the first and runs the
// second twice. Expressions of every hour or a step of hours keep
// elapsed time and are left as Next gives them.
func cronNext(sched cron.Schedule, wall bool, now time.Time, zone *time.Location) time.Time {
	c := sched.Next(now.In(zone))
	if !wall {
		return c
	}
	for range 4 {
		if c.IsZero() {
			return c
		}
		if g, ok := skippedMatch(sched, now.In(zone), c); ok {
			return g
		}
		if !repeated(c) {
			return c
		}
		now, c = c, sched.Next(c)
	}
	return c
}

// repeated reports whether c is the second occurrence of its wall-clock
// time (the clocks went back within the hour or half-hour before it).
func repeated(c time.Time) bool {
	for _, d := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		p := c.Add(-d).In(c.Location())
		if p.Hour() == c.Hour() && p.Minute() == c.Minute() && p.YearDay() == c.YearDay() {
			return true
		}
	}
	return false
}

// skippedMatch looks for a spring-forward change of zone between from
// and c whose skipped wall-clock times include one sched matches, and
// returns the instant of the change (the first that exists after them).
func skippedMatch(sched cron.Schedule, from, c time.Time) (time.Time, bool) {
	t := from
	for range 4 {
		_, end := t.ZoneBounds()
		if end.IsZero() || !end.Before(c) {
			return time.Time{}, false
		}
		_, before := end.Add(-time.Second).Zone()
		_, after := end.Zone()
		if gap := time.Duration(after-before) * time.Second; gap > 0 {
			// Read the skipped wall times in a zone fixed at the offset
			// before the change, where they exist.
			fixed := time.FixedZone("before", before)
			start := end.In(fixed)
			if m := sched.Next(start.Add(-time.Second)); !m.IsZero() && m.Before(start.Add(gap)) && !m.Before(start) {
				return end, true
			}
		}
		t = end
	}
	return time.Time{}, false
}
