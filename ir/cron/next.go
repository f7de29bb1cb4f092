package cron

import (
	"math/bits"
	"time"
)

// Matches reports whether t's minute matches the schedule, reading t's
// wall clock in t's Location. Seconds are ignored.
func (s *Schedule) Matches(t time.Time) bool {
	_, month, day := t.Date()
	return has(s.minute, t.Minute()) && has(s.hour, t.Hour()) && has(s.month, int(month)) &&
		s.dayMatches(day, int(t.Weekday()))
}

// dayMatches applies Vixie cron's day rule: when both day fields are
// restricted a day matches if either does, otherwise both must.
func (s *Schedule) dayMatches(dom, weekday int) bool {
	domOK, dowOK := has(s.dom, dom), has(s.dow, weekday)
	if s.domStar || s.dowStar {
		return domOK && dowOK
	}
	return domOK || dowOK
}

// Next returns the first matching minute strictly after after, in after's
// Location, or the zero Time if there is none within 5 years (e.g. for
// "0 0 30 2 *").
//
// Wall-clock minutes that a daylight-saving jump skips never fire, and a
// minute repeated when clocks fall back fires only at its first
// occurrence, so a job never runs twice for one scheduled minute.
func (s *Schedule) Next(after time.Time) time.Time {
	loc := after.Location()
	year, month, day := after.Date()
	hour, minute, _ := after.Clock()
	d := date{year, int(month), day, int(after.Weekday())}
	// Strictly after: start at the next wall-clock minute.
	if minute++; minute == 60 {
		minute, hour = 0, hour+1
	}
	if hour == 24 {
		hour = 0
		d.addDay()
	}
	limit := date{year: year + 5, month: int(month), day: day}.key()
	for d.key() <= limit {
		switch {
		case !has(s.month, d.month):
			d.nextMonth()
		case !s.dayMatches(d.day, d.weekday):
			d.addDay()
		default:
			if t, ok := s.nextInDay(d, hour, minute, after, loc); ok {
				return t
			}
			d.addDay()
		}
		hour, minute = 0, 0
	}
	return time.Time{}
}

// nextInDay returns the first firing on day d at or after hour:minute
// (wall clock) that is also strictly after after.
func (s *Schedule) nextInDay(d date, hour, minute int, after time.Time, loc *time.Location) (time.Time, bool) {
	for h := nextBit(s.hour, hour); h >= 0; h = nextBit(s.hour, h+1) {
		from := 0
		if h == hour {
			from = minute
		}
		for m := nextBit(s.minute, from); m >= 0; m = nextBit(s.minute, m+1) {
			// The after check matters only after a fall-back, when the wall
			// clock has gone back over minutes that already fired.
			if t, ok := wallTime(d, h, m, loc); ok && t.After(after) {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// wallTime returns the first instant whose wall clock in loc reads
// d h:m, or false if a daylight-saving gap skips that reading.
func wallTime(d date, h, m int, loc *time.Location) (time.Time, bool) {
	t := time.Date(d.year, time.Month(d.month), d.day, h, m, 0, 0, loc)
	if t.Minute() != m || t.Hour() != h || t.Day() != d.day {
		return time.Time{}, false
	}
	// time.Date may pick either instant of a repeated reading; if the zone
	// before t's had a larger offset, the same reading also occurred in it.
	start, _ := t.ZoneBounds()
	if start.IsZero() {
		return t, true
	}
	_, off := t.Zone()
	_, prevOff := start.Add(-time.Nanosecond).Zone()
	if prevOff > off {
		if e := t.Add(-time.Duration(prevOff-off) * time.Second); e.Before(start) {
			return e, true
		}
	}
	return t, true
}

// MinInterval returns the shortest gap between two consecutive firings,
// evaluated in UTC, or 0 if the schedule never fires.
//
// Rather than walking every minute, it combines three independent
// minima: between minutes within an hour, between the last minute of one
// firing hour and the first of the next, and between the last firing of
// one day and the first of the next firing day. Firing days are scanned
// over 28 years, the period after which dates and weekdays repeat (between
// 1901 and 2099); that covers every 4-year leap cycle in every weekday
// alignment, so combinations such as "Feb 29 that is a Sunday" are found.
func (s *Schedule) MinInterval() time.Duration {
	dayGap := s.minDayGap()
	if dayGap == 0 {
		return 0
	}
	firstM, lastM, minuteGap := spread(s.minute)
	firstH, lastH, hourGap := spread(s.hour)
	best := dayGap*24*60 - (lastH*60 + lastM) + (firstH*60 + firstM)
	if minuteGap > 0 {
		best = min(best, minuteGap)
	}
	if hourGap > 0 {
		best = min(best, hourGap*60-lastM+firstM)
	}
	return time.Duration(best) * time.Minute
}

// minDayGap returns the smallest number of days between consecutive firing
// days, or 0 if no day ever fires.
func (s *Schedule) minDayGap() int {
	if gap := s.weeklyDayGap(); gap > 0 {
		return gap
	}
	return s.walkDayGap()
}

// weeklyDayGap is the day gap of a schedule whose firing days depend on the
// weekday alone (every month, every day of the month, and a star day field,
// so that the days match only as the weekday does): the shortest circular
// distance between its weekdays, found without walking the calendar. 0 when
// the schedule is not of that shape.
func (s *Schedule) weeklyDayGap() int {
	const allMonths, allDays = 1<<13 - 1<<1, 1<<32 - 1<<1 // bits 1-12 and 1-31
	if s.month != allMonths || s.dom != allDays || !(s.domStar || s.dowStar) || s.dow&(1<<7-1) == 0 {
		return 0
	}
	first, last, gap := spread(s.dow & (1<<7 - 1))
	if wrap := first + 7 - last; gap == 0 || wrap < gap {
		gap = wrap
	}
	return gap
}

// walkDayGap finds minDayGap by walking the calendar's whole cycle.
func (s *Schedule) walkDayGap() int {
	// 2001-01-01 was a Monday; 28 years later the calendar repeats exactly.
	// When weekdays cannot matter, month and day repeat every 4 years.
	cycle := 28*365 + 7
	if s.dow == 1<<7-1 {
		cycle = 4*365 + 1
	}
	d := date{2001, 1, 1, int(time.Monday)}
	first, prev, gap := -1, -1, 0
	for i := 0; i < cycle && gap != 1; {
		if !has(s.month, d.month) {
			i += daysIn(d.month, d.year) - d.day + 1
			d.nextMonth()
			continue
		}
		if s.dayMatches(d.day, d.weekday) {
			if prev >= 0 && (gap == 0 || i-prev < gap) {
				gap = i - prev
			}
			if first < 0 {
				first = i
			}
			prev = i
		}
		i++
		d.addDay()
	}
	if first < 0 {
		return 0
	}
	// The next cycle starts with the same firing days, so the wrap-around
	// gap is a real gap too; it is the only one when a day fires once.
	if wrap := first + cycle - prev; gap == 0 || wrap < gap {
		gap = wrap
	}
	return gap
}

// spread returns the lowest and highest set bits of a non-empty set and
// the smallest distance between neighbouring set bits (0 if only one).
func spread(set uint64) (first, last, gap int) {
	first, last = bits.TrailingZeros64(set), 63-bits.LeadingZeros64(set)
	for v, next := first, nextBit(set, first+1); next >= 0; v, next = next, nextBit(set, next+1) {
		if gap == 0 || next-v < gap {
			gap = next - v
		}
	}
	return first, last, gap
}

func has(set uint64, v int) bool { return set&(1<<uint(v)) != 0 }

// nextBit returns the lowest set bit at or above from, or -1.
func nextBit(set uint64, from int) int {
	if from >= 64 {
		return -1
	}
	rest := set >> uint(from)
	if rest == 0 {
		return -1
	}
	return from + bits.TrailingZeros64(rest)
}

// date is a proleptic Gregorian calendar day with its weekday, stepped by
// hand because time.Date per candidate day would dominate Next's cost.
type date struct{ year, month, day, weekday int }

func (d date) key() int { return d.year<<9 | d.month<<5 | d.day }

func (d *date) addDay() {
	d.weekday = (d.weekday + 1) % 7
	if d.day++; d.day > daysIn(d.month, d.year) {
		d.day = 1
		d.advanceMonth()
	}
}

// nextMonth moves to the first day of the following month.
func (d *date) nextMonth() {
	d.weekday = (d.weekday + daysIn(d.month, d.year) - d.day + 1) % 7
	d.day = 1
	d.advanceMonth()
}

func (d *date) advanceMonth() {
	if d.month++; d.month > 12 {
		d.month = 1
		d.year++
	}
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
