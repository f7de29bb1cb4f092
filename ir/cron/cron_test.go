package cron

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func set(vals ...int) uint64 {
	var b uint64
	for _, v := range vals {
		b |= 1 << uint(v)
	}
	return b
}

func span(lo, hi, step int) uint64 {
	var b uint64
	for v := lo; v <= hi; v += step {
		b |= 1 << uint(v)
	}
	return b
}

var acceptTests = []struct {
	name, expr string
	field      int
	want       uint64
}{
	{"star minute", "* * * * *", minuteField, span(0, 59, 1)},
	{"star hour", "* * * * *", hourField, span(0, 23, 1)},
	{"star dom", "* * * * *", domField, span(1, 31, 1)},
	{"star month", "* * * * *", monthField, span(1, 12, 1)},
	{"star dow", "* * * * *", dowField, span(0, 6, 1)},
	{"number", "5 * * * *", minuteField, set(5)},
	{"leading zero", "05 * * * *", minuteField, set(5)},
	{"range", "1-3 * * * *", minuteField, set(1, 2, 3)},
	{"single-value range", "7-7 * * * *", minuteField, set(7)},
	{"star step", "*/15 * * * *", minuteField, set(0, 15, 30, 45)},
	{"star step dom starts at 1", "* * */10 * *", domField, set(1, 11, 21, 31)},
	{"range step", "10-30/10 * * * *", minuteField, set(10, 20, 30)},
	{"hour range step", "0 9-17/2 * * *", hourField, set(9, 11, 13, 15, 17)},
	{"start step runs to max", "50/3 * * * *", minuteField, set(50, 53, 56, 59)},
	{"start step month", "0 0 1 2/3 *", monthField, set(2, 5, 8, 11)},
	{"step wider than field", "*/90 * * * *", minuteField, set(0)},
	{"list", "1,5-7,*/30 * * * *", minuteField, set(0, 1, 5, 6, 7, 30)},
	{"month names", "0 0 1 JAN,jun,Dec *", monthField, set(1, 6, 12)},
	{"month name range", "0 0 1 jan-mar *", monthField, set(1, 2, 3)},
	{"month name step", "0 0 1 JAN-DEC/4 *", monthField, set(1, 5, 9)},
	{"weekday names", "0 0 * * sun,Wed,SAT", dowField, set(0, 3, 6)},
	{"weekday name range", "0 9 * * MON-FRI", dowField, span(1, 5, 1)},
	{"mixed name and number", "0 0 * * 1-fri", dowField, span(1, 5, 1)},
	{"dow 7 is sunday", "0 0 * * 7", dowField, set(0)},
	{"dow range to 7", "0 0 * * 5-7", dowField, set(0, 5, 6)},
	{"dow 0-7", "0 0 * * 0-7", dowField, span(0, 6, 1)},
	{"dow start step reaches 7", "0 0 * * MON/2", dowField, set(0, 1, 3, 5)},
	{"dow star step", "0 0 * * */2", dowField, set(0, 2, 4, 6)},
	{"max values", "59 23 31 12 6", minuteField, set(59)},
	{"tabs and padding", " \t0\t 12  *  *\t* \n", hourField, set(12)},
}

func TestParseAccepts(t *testing.T) {
	for _, tt := range acceptTests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.expr)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.expr, err)
			}
			got := [5]uint64{s.minute, s.hour, s.dom, s.month, s.dow}[tt.field]
			if got != tt.want {
				t.Errorf("Parse(%q) %s bits = %b, want %b", tt.expr, fields[tt.field].name, got, tt.want)
			}
		})
	}
}

func TestStarFlags(t *testing.T) {
	tests := []struct {
		expr             string
		domStar, dowStar bool
	}{
		{"0 0 * * *", true, true},
		{"0 0 13 * 5", false, false},
		{"0 0 */2 * 1", true, false},
		{"0 0 1 * */2", false, true},
		{"0 0 1,* * 1", false, false}, // Vixie looks only at the first character
	}
	for _, tt := range tests {
		s, err := Parse(tt.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.expr, err)
		}
		if s.domStar != tt.domStar || s.dowStar != tt.dowStar {
			t.Errorf("Parse(%q) domStar, dowStar = %v, %v; want %v, %v", tt.expr, s.domStar, s.dowStar, tt.domStar, tt.dowStar)
		}
	}
}

func TestString(t *testing.T) {
	s, err := Parse("\t*/5   9-17 * jan-MAR\tMON-fri  ")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "*/5 9-17 * jan-MAR MON-fri"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

var rejectTests = []struct {
	name, expr string
	offset     int
	msg        string
}{
	// A zone prefix some crons take (newc9: told to remove a seconds field, at the string's end).
	{"CRON_TZ prefix", "CRON_TZ=Europe/Paris 0 9 * * *", 0, "CRON_TZ is not part of a cron expression here: remove it and name the zone in the policy (policy.box.local.timezone"},
	{"TZ prefix", "TZ=UTC 0 9 * * *", 0, "TZ is not part of a cron expression here"},
	{"empty", "", 0, "empty expression"},
	{"blank", "  \t ", 0, "empty expression"},
	{"too few", "* * * *", 0, "found 4 fields, expected 5: minute hour day-of-month month day-of-week"},
	{"seconds field", "0 0 * * * *", 10, "found 6 fields, but standard cron has exactly 5"},
	{"seconds and year", "0 0 12 * * ? 2026", 11, "no seconds or year field"},
	{"far too many", "1 2 3 4 5 6 7 8", 10, "found 8 fields, expected 5: minute hour"},
	{"daily", "@daily", 0, `"0 0 * * *"`},
	{"hourly padded", "  @hourly", 2, `"0 * * * *"`},
	{"weekly", "@weekly", 0, `"0 0 * * 0"`},
	{"monthly", "@monthly", 0, `"0 0 1 * *"`},
	{"yearly", "@yearly", 0, `"0 0 1 1 *"`},
	{"annually", "@ANNUALLY", 0, `"0 0 1 1 *"`},
	{"midnight", "@midnight", 0, `"0 0 * * *"`},
	{"reboot", "@reboot", 0, "no 5-field equivalent"},
	{"every minutes", "@every 5m", 0, `"*/5 * * * *"`},
	{"every minute", "@every 1m", 0, `"* * * * *"`},
	{"every hour", "@every 1h", 0, `"0 * * * *"`},
	{"every hours", "@every 2h", 0, `"0 */2 * * *"`},
	{"every day", "@every 24h", 0, `"0 0 * * *"`},
	{"every uneven", "@every 7m", 0, "cannot express an interval of 7m exactly"},
	{"every bare", "@every", 0, "@every is not standard cron"},
	{"unknown macro", "@often", 0, `unknown macro "@often"`},
	{"minute 60", "60 * * * *", 0, "minute 60 is out of range 0-59"},
	{"hour 24", "0 24 * * *", 2, "hour 24 is out of range 0-23"},
	{"dom 0", "0 0 0 * *", 4, "day-of-month 0 is out of range 1-31"},
	{"dom 32", "0 0 32 * *", 4, "day-of-month 32 is out of range 1-31"},
	{"month 13", "0 0 * 13 *", 6, "month 13 is out of range 1-12"},
	{"month 0", "0 0 * 0 *", 6, "month 0 is out of range 1-12"},
	{"dow 8", "0 0 * * 8", 8, "day-of-week 8 is out of range 0-7"},
	{"range end out of range", "0 0 * * 1-8", 10, "day-of-week 8 is out of range"},
	{"huge number", "99999999999999999999 * * * *", 0, "minute 99999999999999999999 is out of range"},
	{"reversed hour", "0 5-2 * * *", 2, "hour range 5-2 is reversed"},
	{"reversed hour fix", "0 5-2 * * *", 2, "write 5-23,0-2 to wrap around, or 2-5 to swap"},
	{"reversed with step", "0 22-4/2 * * *", 2, "write 22-23/2,0-4/2"},
	{"reversed weekday names", "0 0 * * FRI-MON", 8, "write FRI-SAT,SUN-MON to wrap around, or MON-FRI"},
	{"reversed to sunday", "0 0 * * 6-0", 8, "write 6-7"},
	{"reversed from 7", "0 0 * * 7-2", 8, "write 0-2"},
	{"reversed months", "0 0 1 nov-feb *", 6, "NOV-DEC,JAN-FEB"},
	{"step 0", "*/0 * * * *", 2, "minute step 0 is invalid"},
	{"range step 0", "0 0 1-10/0 * *", 9, "day-of-month step 0 is invalid"},
	{"empty list item", "1,,2 * * * *", 2, "empty entry in minute list"},
	{"leading comma", "0 ,1 * * *", 2, "empty entry in hour list"},
	{"trailing comma", "1, * * * *", 1, "empty entry in minute list"},
	{"question mark", "0 0 ? * MON", 4, `"?" is Quartz syntax, not standard cron`},
	{"last day", "0 0 L * *", 4, `"L" (last day of the month) is Quartz syntax`},
	{"last weekday of month", "0 0 LW * *", 4, "Quartz syntax"},
	{"nearest weekday", "0 0 15W * *", 6, `"W" (nearest weekday) is Quartz syntax`},
	{"nth weekday", "0 0 * * 6#3", 9, `"#" (nth weekday of the month) is Quartz syntax`},
	{"last friday", "0 0 * * 5L", 9, "Quartz syntax, not standard cron"},
	{"last dow", "0 0 * * L", 8, "Quartz syntax, not standard cron"},
	{"typo weekday", "0 0 * * THR", 8, `unknown day-of-week name "THR": did you mean THU?`},
	{"typo month", "0 0 1 jna *", 6, `unknown month name "jna": did you mean JAN?`},
	{"typo in range", "0 0 * * MON-FRY", 12, "did you mean FRI?"},
	{"misspelled long name", "0 0 * * Wensday", 8, "did you mean WED?"},
	{"long weekday", "0 0 * * MONDAY", 8, "write MON instead of \"MONDAY\""},
	{"long month", "0 0 1 September *", 6, "write SEP instead"},
	{"weekday in month field", "0 0 1 MON *", 6, "MON is a day-of-week name, but this is the month field"},
	{"month in weekday field", "0 0 * * JAN", 8, "JAN is a month name, but this is the day-of-week field"},
	{"name in hour field", "0 MON * * *", 2, "hour field takes numbers 0-23"},
	{"en dash", "0 0 * * 1–5", 9, "not an ASCII hyphen"},
	{"double range", "1-5-7 * * * *", 3, `unexpected '-' after "1-5" in minute entry "1-5-7"`},
	{"star range", "*-5 * * * *", 0, "* cannot start a range"},
	{"star number", "*5 * * * *", 1, "write a step as */5"},
	{"star after dash", "0 0 * * 1-*", 10, "* must stand alone"},
	{"step without start", "/5 * * * *", 0, "write */5 or a-b/5"},
	{"step without number", "*/ * * * *", 1, "step is missing its number"},
	{"step not a number", "*/x * * * *", 2, `step must be a number, found "x"`},
	{"range without end", "5- * * * *", 1, "range 5- is missing its end"},
	{"decimal", "1.5 * * * *", 1, `unexpected '.' after "1"`},
	{"bad start", "0 0 * * %", 8, `unexpected '%' in day-of-week entry "%": expected a number or name`},
	{"unit suffix", "5m * * * *", 1, `unexpected 'm'`},
}

func TestParseRejects(t *testing.T) {
	for _, tt := range rejectTests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.expr)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error", tt.expr, s)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error %T is not *Error", tt.expr, err)
			}
			if e.Offset != tt.offset {
				t.Errorf("Parse(%q) offset = %d, want %d (%s)", tt.expr, e.Offset, tt.offset, e.Msg)
			}
			if !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("Parse(%q) message = %q, want it to contain %q", tt.expr, e.Msg, tt.msg)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	_, err := Parse("0 24 * * *")
	if got, want := err.Error(), "cron: at offset 2: hour 24 is out of range 0-23: use 0 for midnight"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestMatches(t *testing.T) {
	utc := func(s string) time.Time {
		t.Helper()
		tm, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tests := []struct {
		expr, at string
		want     bool
	}{
		{"*/15 * * * *", "2026-05-05 10:45", true},
		{"*/15 * * * *", "2026-05-05 10:46", false},
		{"0 9-17/2 * * MON-FRI", "2026-01-05 13:00", true},  // Monday
		{"0 9-17/2 * * MON-FRI", "2026-01-05 14:00", false}, // even hour
		{"0 9-17/2 * * MON-FRI", "2026-01-03 13:00", false}, // Saturday
		{"0 0 13 * 5", "2026-01-13 00:00", true},            // Tuesday the 13th: day-of-month alone suffices
		{"0 0 13 * 5", "2026-01-02 00:00", true},            // Friday the 2nd: day-of-week alone suffices
		{"0 0 13 * 5", "2026-01-14 00:00", false},
		{"0 0 */2 * 5", "2026-01-09 00:00", true},  // star field: both must hold, Friday the 9th
		{"0 0 */2 * 5", "2026-01-02 00:00", false}, // Friday the 2nd, even day
		{"0 0 */2 * 5", "2026-01-03 00:00", false}, // odd day, Saturday
		{"0 0 * * 7", "2026-01-04 00:00", true},    // Sunday
		{"0 0 * * 0", "2026-01-04 00:00", true},
		{"0 0 * * 7", "2026-01-05 00:00", false},
		{"0 0 * jan-mar *", "2026-04-01 00:00", false},
	}
	for _, tt := range tests {
		s, err := Parse(tt.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.expr, err)
		}
		if got := s.Matches(utc(tt.at)); got != tt.want {
			t.Errorf("Parse(%q).Matches(%s) = %v, want %v", tt.expr, tt.at, got, tt.want)
		}
	}
}

func TestMinInterval(t *testing.T) {
	tests := []struct {
		expr string
		want time.Duration
	}{
		{"* * * * *", time.Minute},
		{"*/5 * * * *", 5 * time.Minute},
		{"0,1 * * * *", time.Minute},
		{"*/7 * * * *", 4 * time.Minute}, // 56 -> next hour's 0
		{"0 0 * * *", 24 * time.Hour},
		{"0 0 1 1 *", 365 * 24 * time.Hour},
		{"0 */6 * * *", 6 * time.Hour},
		{"59 23 * * *", 24 * time.Hour},
		{"0,59 0,23 * * *", time.Minute},      // 23:59 -> 00:00 next day
		{"0 22 * * 5,1", 72 * time.Hour},      // Friday -> Monday is 3 days
		{"0 0 13 * 5", 24 * time.Hour},        // a Friday the 12th or 14th exists
		{"0 0 29 2 *", 1461 * 24 * time.Hour}, // leap days only
		{"0 0 29 2 */7", 10227 * 24 * time.Hour},
		{"0 0 30 2 *", 0},
	}
	for _, tt := range tests {
		s, err := Parse(tt.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.expr, err)
		}
		if got := s.MinInterval(); got != tt.want {
			t.Errorf("Parse(%q).MinInterval() = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

// FuzzParse checks that Parse never panics, reports offsets inside the
// expression, and that whatever it accepts evaluates consistently.
func FuzzParse(f *testing.F) {
	for _, tt := range acceptTests {
		f.Add(tt.expr)
	}
	for _, tt := range rejectTests {
		f.Add(tt.expr)
	}
	for _, tt := range nextTests {
		f.Add(tt.expr)
	}
	from := time.Date(2026, 3, 7, 23, 17, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := Parse(expr)
		if err != nil {
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("Parse(%q) error %T is not *Error", expr, err)
			}
			if e.Offset < 0 || e.Offset > len(expr) || e.Msg == "" {
				t.Fatalf("Parse(%q) = %#v: bad offset or empty message", expr, e)
			}
			return
		}
		again, err := Parse(s.String())
		if err != nil || *again != *s {
			t.Fatalf("Parse(%q).String() = %q does not round-trip: %v", expr, s.String(), err)
		}
		next := s.Next(from)
		if !next.IsZero() && (!next.After(from) || !s.Matches(next)) {
			t.Fatalf("Parse(%q).Next(%v) = %v, which does not match", expr, from, next)
		}
		if d := s.MinInterval(); d < 0 || (d == 0 && !next.IsZero()) {
			t.Fatalf("Parse(%q).MinInterval() = %v but Next = %v", expr, d, next)
		}
	})
}
