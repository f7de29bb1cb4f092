package cron

import "testing"

// Portable writes Sunday as 0 where the day-of-week field names 7, firing on the same days, and
// keeps every other expression as written.
func TestPortable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0 9 * * 7", "0 9 * * 0"},
		{"0 9 * * 5-7", "0 9 * * 0,5-6"},
		{"0 9 * * 0,7", "0 9 * * 0"},
		{"0 9 * * 1,7", "0 9 * * 0-1"},
		{"0 9 * * 5-7/2", "0 9 * * 0,5"},
		{"0 9 1 * 7", "0 9 1 * 0"},
		{"0 9 * * 1-5", "0 9 * * 1-5"},
		{"0 9 * * MON-FRI", "0 9 * * MON-FRI"},
		{"0 9 * * */7", "0 9 * * */7"},
		{"0 9 * * 1/7", "0 9 * * 1/7"},
		{"*/7 7 7 7 *", "*/7 7 7 7 *"},
	} {
		s, err := Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Portable()
		if got != c.want {
			t.Errorf("%q.Portable() = %q, want %q", c.in, got, c.want)
		}
		p, err := Parse(got)
		if err != nil || p.dow != s.dow || p.dowStar != s.dowStar || p.minute != s.minute || p.hour != s.hour || p.dom != s.dom || p.month != s.month {
			t.Errorf("%q fires otherwise than %q (%v)", got, c.in, err)
		}
	}
}

func TestPortableOf(t *testing.T) {
	for in, want := range map[string]string{"0  9 * * 7": "0 9 * * 0", "0  9 * * 1-5": "0  9 * * 1-5", "not cron": "not cron"} {
		if got := PortableOf(in); got != want {
			t.Errorf("PortableOf(%q) = %q, want %q", in, got, want)
		}
	}
}
