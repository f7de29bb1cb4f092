package cron

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the DST cases must not depend on the host's zoneinfo
)

var nextTests = []struct {
	name, expr, zone string
	after, want      string // RFC 3339; want "" means the zero Time
}{
	{"leap day", "0 0 29 2 *", "UTC", "2027-03-01T00:00:00Z", "2028-02-29T00:00:00Z"},
	{"31st skips February", "0 0 31 * *", "UTC", "2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z"},
	{"31st skips April", "0 0 31 * *", "UTC", "2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z"},
	{"Friday or 13th: Friday", "0 0 13 * 5", "UTC", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"},
	{"Friday or 13th: Tuesday 13th", "0 0 13 * 5", "UTC", "2026-01-09T00:00:00Z", "2026-01-13T00:00:00Z"},
	{"Friday or 13th: next Friday", "0 0 13 * 5", "UTC", "2026-01-13T00:00:00Z", "2026-01-16T00:00:00Z"},
	{"star step restricts both days", "0 0 */2 * 5", "UTC", "2026-01-01T00:00:00Z", "2026-01-09T00:00:00Z"},
	{"quarter hour", "*/15 * * * *", "UTC", "2026-05-05T10:44:59Z", "2026-05-05T10:45:00Z"},
	{"strictly after", "*/15 * * * *", "UTC", "2026-05-05T10:45:00Z", "2026-05-05T11:00:00Z"},
	{"quarter hour over midnight", "*/15 * * * *", "UTC", "2026-05-05T23:59:00Z", "2026-05-06T00:00:00Z"},
	{"fractional second", "0 10 * * *", "UTC", "2026-01-01T09:59:59.5Z", "2026-01-01T10:00:00Z"},
	{"every minute drops seconds", "* * * * *", "UTC", "2026-01-01T10:00:30Z", "2026-01-01T10:01:00Z"},
	{"business hours over weekend", "0 9-17/2 * * MON-FRI", "UTC", "2026-01-02T17:00:00Z", "2026-01-05T09:00:00Z"},
	{"business hours step", "0 9-17/2 * * MON-FRI", "UTC", "2026-01-05T09:00:00Z", "2026-01-05T11:00:00Z"},
	{"year rollover", "59 23 31 12 *", "UTC", "2026-12-31T23:59:00Z", "2027-12-31T23:59:00Z"},
	{"end of year", "59 23 31 12 *", "UTC", "2026-06-01T00:00:00Z", "2026-12-31T23:59:00Z"},
	{"dow 7 is Sunday", "0 0 * * 7", "UTC", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"},
	{"never: Feb 30", "0 0 30 2 *", "UTC", "2026-01-01T00:00:00Z", ""},
	{"never: Apr 31", "0 0 31 4 *", "UTC", "2026-01-01T00:00:00Z", ""},
	{"beyond 5 years", "0 0 29 2 */7", "UTC", "2026-01-01T00:00:00Z", ""}, // next Sunday Feb 29 is 2032
	{"within 5 years", "0 0 29 2 */7", "UTC", "2027-03-01T00:00:00Z", "2032-02-29T00:00:00Z"},
	{"local zone result", "0 9 * * *", "America/New_York", "2026-06-01T14:00:00Z", "2026-06-02T09:00:00-04:00"},

	// 2026-03-08 02:00 EST jumps to 03:00 EDT in New York.
	{"spring forward skips missing minute", "30 2 * * *", "America/New_York", "2026-03-07T02:30:00-05:00", "2026-03-09T02:30:00-04:00"},
	{"spring forward same day", "30 2 * * *", "America/New_York", "2026-03-08T00:00:00-05:00", "2026-03-09T02:30:00-04:00"},
	{"spring forward every minute", "* * * * *", "America/New_York", "2026-03-08T01:59:00-05:00", "2026-03-08T03:00:00-04:00"},
	{"spring forward hourly", "0 * * * *", "America/New_York", "2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00"},
	// 2026-11-01 02:00 EDT falls back to 01:00 EST, repeating 01:00-01:59.
	{"fall back first occurrence", "30 1 * * *", "America/New_York", "2026-10-31T01:30:00-04:00", "2026-11-01T01:30:00-04:00"},
	{"fall back no second occurrence", "30 1 * * *", "America/New_York", "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"},
	{"fall back from repeated hour", "30 1 * * *", "America/New_York", "2026-11-01T01:10:00-05:00", "2026-11-02T01:30:00-05:00"},
	{"fall back every minute", "* * * * *", "America/New_York", "2026-11-01T01:59:00-04:00", "2026-11-01T02:00:00-05:00"},
	{"fall back hourly", "0 * * * *", "America/New_York", "2026-11-01T00:30:00-04:00", "2026-11-01T01:00:00-04:00"},
	{"fall back hourly skips repeat", "0 * * * *", "America/New_York", "2026-11-01T01:00:00-04:00", "2026-11-01T02:00:00-05:00"},
	// Lord Howe Island moves its clocks by 30 minutes.
	{"half-hour fall back", "45 1 * * *", "Australia/Lord_Howe", "2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"},
	// Samoa skipped 2011-12-30 entirely when it crossed the date line.
	{"skipped day", "0 12 * * *", "Pacific/Apia", "2011-12-29T12:00:00-10:00", "2011-12-31T12:00:00+14:00"},
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestNext(t *testing.T) {
	for _, tt := range nextTests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := time.LoadLocation(tt.zone)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(tt.expr)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.expr, err)
			}
			after := mustTime(t, tt.after).In(loc)
			got := s.Next(after)
			if tt.want == "" {
				if !got.IsZero() {
					t.Fatalf("Next(%v) = %v, want zero Time", after, got)
				}
				return
			}
			want := mustTime(t, tt.want)
			if !got.Equal(want) {
				t.Fatalf("%q.Next(%v) = %v, want %v", tt.expr, after, got, want.In(loc))
			}
			if got.Location() != loc {
				t.Errorf("Next returned Location %v, want %v", got.Location(), loc)
			}
		})
	}
}

// randomExpr builds expressions from pieces that exercise every syntax
// form, including day combinations that trigger the Vixie OR rule.
func randomExpr(r *rand.Rand) string {
	pieces := [5][]string{
		{"*", "0", "*/7", "*/15", "5-10", "0,30", "59", "10-50/20", "45/5"},
		{"*", "0", "*/5", "9-17/2", "23", "0,12", "22-23"},
		{"*", "1", "13", "31", "29", "*/10", "1-7", "15-20", "30,31"},
		{"*", "2", "jan-mar", "*/4", "12", "4,6,9,11", "FEB"},
		{"*", "5", "0", "7", "MON-FRI", "sat,sun", "*/3", "5-7", "1/2"},
	}
	parts := make([]string, 5)
	for i, p := range pieces {
		parts[i] = p[r.IntN(len(p))]
	}
	return strings.Join(parts, " ")
}

// bruteNext walks instants minute by minute. It treats a wall reading as
// already seen when it occurred an hour earlier, which is exact for zones
// whose transitions are whole hours.
func bruteNext(s *Schedule, after time.Time, horizon time.Duration) (time.Time, bool) {
	loc := after.Location()
	t := after.Truncate(time.Minute)
	for end := after.Add(horizon); t.Before(end); {
		t = t.Add(time.Minute)
		local := t.In(loc)
		prev := t.Add(-time.Hour).In(loc)
		repeated := prev.Hour() == local.Hour() && prev.Minute() == local.Minute() && prev.Day() == local.Day()
		if s.Matches(local) && !repeated {
			return local, true
		}
	}
	return time.Time{}, false
}

func TestNextAgainstBruteForce(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	starts := []time.Time{
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2028, 2, 27, 13, 7, 0, 0, time.UTC),
		time.Date(2026, 3, 6, 22, 31, 0, 0, ny),
		time.Date(2026, 10, 30, 23, 59, 0, 0, ny),
		time.Date(2026, 11, 1, 1, 15, 0, 0, ny).Add(time.Hour), // inside the repeated hour
	}
	const horizon = 35 * 24 * time.Hour
	r := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		expr := randomExpr(r)
		s, err := Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", expr, err)
		}
		for _, start := range starts {
			after := start
			for range 5 {
				got := s.Next(after)
				want, ok := bruteNext(s, after, horizon)
				if !ok {
					if !got.IsZero() && got.Sub(after) <= horizon {
						t.Fatalf("%q.Next(%v) = %v; brute force found nothing within %v", expr, after, got, horizon)
					}
					break
				}
				if !got.Equal(want) {
					t.Fatalf("%q.Next(%v) = %v, want %v", expr, after, got, want)
				}
				after = got
			}
		}
	}
}

// TestMinIntervalAgainstNext checks MinInterval against the gaps between
// consecutive Next results over the whole 28-year cycle, for expressions
// sparse enough to enumerate.
func TestMinIntervalAgainstNext(t *testing.T) {
	start := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(28, 0, 0)
	r := rand.New(rand.NewPCG(3, 4))
	checked := 0
	for range 400 {
		expr := randomExpr(r)
		s, err := Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", expr, err)
		}
		var observed time.Duration
		prev, n := time.Time{}, 0
		for at := s.Next(start.Add(-time.Minute)); !at.IsZero() && at.Before(end); at = s.Next(at) {
			if !prev.IsZero() && (observed == 0 || at.Sub(prev) < observed) {
				observed = at.Sub(prev)
			}
			prev = at
			if n++; n > 20000 {
				break
			}
		}
		got := s.MinInterval()
		switch {
		case n > 20000 && got > observed:
			t.Errorf("%q.MinInterval() = %v, but a gap of %v occurs", expr, got, observed)
		case n <= 20000 && n > 1 && got != observed:
			t.Errorf("%q.MinInterval() = %v, want %v", expr, got, observed)
		case n <= 20000:
			checked++
		}
	}
	if checked < 50 {
		t.Errorf("only %d expressions were checked exactly", checked)
	}
}

func BenchmarkNext(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name, expr string
		loc        *time.Location
	}{
		{"every-minute", "* * * * *", time.UTC},
		{"business-hours", "0 9-17/2 * * MON-FRI", time.UTC},
		{"business-hours-NY", "0 9-17/2 * * MON-FRI", ny},
		{"friday-13th", "0 0 13 * 5", time.UTC},
		{"leap-day", "0 0 29 2 *", time.UTC},
		{"never", "0 0 30 2 *", time.UTC},
	}
	for _, c := range cases {
		s, err := Parse(c.expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			from := time.Date(2026, 3, 1, 12, 34, 56, 0, c.loc)
			for b.Loop() {
				s.Next(from)
			}
		})
	}
}

func BenchmarkMinInterval(b *testing.B) {
	for _, expr := range []string{"* * * * *", "0 0 * * 1", "0 0 13 * 5", "0 0 29 2 */7", "0 0 30 2 *"} {
		s, err := Parse(expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%q", expr), func(b *testing.B) {
			for b.Loop() {
				s.MinInterval()
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := Parse("*/5 9-17 1,15 JAN-MAR MON-FRI"); err != nil {
			b.Fatal(err)
		}
	}
}

// The weekly shortcut of minDayGap agrees with the calendar walk for every set of weekdays, with
// the day of month written as a star or a full range, and with star weekday steps; a schedule of
// another shape walks.
func TestWeeklyDayGapAgainstWalk(t *testing.T) {
	var exprs []string
	for set := 1; set < 1<<7; set++ {
		var days []string
		for d := 0; d < 7; d++ {
			if set&(1<<d) != 0 {
				days = append(days, fmt.Sprint(d))
			}
		}
		list := strings.Join(days, ",")
		exprs = append(exprs, "0 0 * * "+list, "0 0 1-31 * "+list, "0 0 */1 * "+list)
	}
	exprs = append(exprs, "0 0 1-31 * */2", "0 0 1-31 * */3", "0 0 * * *", "0 0 * 1-11 1", "0 0 */2 * 1", "0 0 1-30 * 1")
	shortcut := 0
	for _, expr := range exprs {
		s, err := Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", expr, err)
		}
		if s.weeklyDayGap() > 0 {
			shortcut++
		}
		if got, want := s.minDayGap(), s.walkDayGap(); got != want {
			t.Errorf("%q: minDayGap %d, the walk finds %d", expr, got, want)
		}
	}
	if shortcut < 2*127 {
		t.Errorf("the shortcut served %d of %d weekly schedules", shortcut, 2*127)
	}
}
