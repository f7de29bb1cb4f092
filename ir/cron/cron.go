// Package cron parses and evaluates standard five-field cron expressions
// (minute hour day-of-month month day-of-week) with Vixie cron semantics,
// the dialect GitHub Actions' schedule trigger uses.
//
// Parse errors carry the byte offset of the offending token so a validator
// can point at the exact column. Next computes exact fire times in any
// Location, including across daylight-saving transitions, rather than
// approximating a schedule as an interval.
package cron

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/autonomyhq/autonomy/ir/internal/editdist"
)

// Schedule is a parsed 5-field cron expression. The zero value is not
// useful; obtain one from Parse.
type Schedule struct {
	// Bit i is set when value i is allowed. Day-of-week 7 is folded into 0
	// at parse time so evaluation never has to know about the alias.
	minute, hour, dom, month, dow uint64
	// Vixie cron ORs the two day fields only when both are restricted, and
	// "restricted" is decided by the field's first character, so the flag
	// must be kept separately from the bitsets (*/2 restricts bits but is
	// still a star field).
	domStar, dowStar bool
	expr             string
}

// Error is a parse failure. Offset is the byte offset in the expression of
// the offending field or token; Msg says what is wrong and how to fix it.
type Error struct {
	Offset int
	Msg    string
}

// Error formats the failure with its offset so it stays useful even when
// the caller does not render a column marker.
func (e *Error) Error() string {
	return fmt.Sprintf("cron: at offset %d: %s", e.Offset, e.Msg)
}

func errorf(off int, format string, args ...any) *Error {
	return &Error{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

const fieldList = "minute hour day-of-month month day-of-week"

// Parse parses a 5-field expression: minute hour day-of-month month
// day-of-week. Fields are separated by spaces or tabs; other ASCII
// whitespace is accepted too so a trailing newline from a YAML block
// scalar is harmless. The returned error, if any, is always a *Error.
func Parse(expr string) (*Schedule, error) {
	type token struct {
		text string
		off  int
	}
	var toks []token
	for i := 0; i < len(expr); {
		if isSpace(expr[i]) {
			i++
			continue
		}
		j := i
		for j < len(expr) && !isSpace(expr[j]) {
			j++
		}
		toks = append(toks, token{expr[i:j], i})
		i = j
	}
	if len(toks) > 0 && toks[0].text[0] == '@' {
		arg := ""
		if len(toks) > 1 {
			arg = toks[1].text
		}
		return nil, macroError(toks[0].off, toks[0].text, arg)
	}
	if len(toks) > 0 && (strings.HasPrefix(toks[0].text, "CRON_TZ=") || strings.HasPrefix(toks[0].text, "TZ=")) {
		name, _, _ := strings.Cut(toks[0].text, "=")
		return nil, errorf(toks[0].off, "%s is not part of a cron expression here: remove it and name the zone in the policy "+
			"(policy.box.local.timezone for the local runner, policy.box.kubernetes.timeZone for Kubernetes; GitHub Actions reads cron in UTC)", name)
	}
	switch n := len(toks); {
	case n == 0:
		return nil, errorf(0, "empty expression: expected 5 fields: %s", fieldList)
	case n < 5:
		return nil, errorf(0, "found %d fields, expected 5: %s", n, fieldList)
	case n == 6 || n == 7:
		return nil, errorf(toks[5].off, "found %d fields, but standard cron has exactly 5 (%s) "+
			"with no seconds or year field, unlike Quartz or Spring: remove the seconds or year field", n, fieldList)
	case n > 7:
		return nil, errorf(toks[5].off, "found %d fields, expected 5: %s", n, fieldList)
	}

	s := &Schedule{}
	sets := [5]*uint64{&s.minute, &s.hour, &s.dom, &s.month, &s.dow}
	texts := make([]string, 5)
	for i, t := range toks {
		bits, err := fields[i].parse(t.text, t.off)
		if err != nil {
			return nil, err
		}
		*sets[i] = bits
		texts[i] = t.text
	}
	s.domStar = texts[domField][0] == '*'
	s.dowStar = texts[dowField][0] == '*'
	s.expr = strings.Join(texts, " ")
	return s, nil
}

// String returns the original expression with fields separated by single
// spaces; names keep the case they were written in.
func (s *Schedule) String() string { return s.expr }

// Portable is String with Sunday written 0 wherever the day-of-week field names it 7 (a value or
// a range's end): schedulers that take 0-6 only (Kubernetes' CronJob) read it, and it fires on
// the same days. A field without 7, or led by *, is kept as written.
func (s *Schedule) Portable() string {
	fs := strings.Split(s.expr, " ")
	dow := fs[dowField]
	if dow[0] == '*' || !namesSeven(dow) {
		return s.expr
	}
	var items []string
	for d := 0; d <= 6; d++ {
		if s.dow&(1<<d) == 0 {
			continue
		}
		end := d
		for end < 6 && s.dow&(1<<(end+1)) != 0 {
			end++
		}
		if end > d {
			items = append(items, strconv.Itoa(d)+"-"+strconv.Itoa(end))
		} else {
			items = append(items, strconv.Itoa(d))
		}
		d = end
	}
	fs[dowField] = strings.Join(items, ",")
	return strings.Join(fs, " ")
}

// PortableOf is expr as written, or its Portable form when its day-of-week field names 7 (expr
// as written when it does not parse: validation says why).
func PortableOf(expr string) string {
	s, err := Parse(expr)
	if err != nil || s.Portable() == s.String() {
		return expr
	}
	return s.Portable()
}

// namesSeven reports whether a day-of-week field names 7: as a value or a range's bound, not as
// a step.
func namesSeven(field string) bool {
	for _, item := range strings.Split(field, ",") {
		values, _, _ := strings.Cut(item, "/")
		for _, v := range strings.Split(values, "-") {
			if v == "7" {
				return true
			}
		}
	}
	return false
}

var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// macroError explains that @-macros are a daemon extension GitHub Actions
// does not accept, and offers the 5-field spelling where one exists.
func macroError(off int, name, arg string) *Error {
	lower := strings.ToLower(name)
	if eq, ok := macros[lower]; ok {
		return errorf(off, "%s is a nonstandard macro: write the 5-field equivalent %q", name, eq)
	}
	switch lower {
	case "@reboot":
		return errorf(off, "@reboot runs at daemon startup and has no 5-field equivalent: write a 5-field schedule (%s)", fieldList)
	case "@every":
		return errorf(off, "%s", everyMessage(arg))
	}
	return errorf(off, "unknown macro %q: standard cron has no macros; write 5 fields (%s)", name, fieldList)
}

func everyMessage(arg string) string {
	const prefix = "@every is not standard cron"
	d, err := time.ParseDuration(arg)
	var eq string
	switch {
	case err != nil || d <= 0:
		return prefix + `: write 5 fields, e.g. "*/15 * * * *" for every 15 minutes`
	case d%time.Minute == 0 && d < time.Hour && time.Hour%d == 0:
		eq = fmt.Sprintf("*/%d * * * *", d/time.Minute)
		if d == time.Minute {
			eq = "* * * * *"
		}
	case d%time.Hour == 0 && d <= 24*time.Hour && (24*time.Hour)%d == 0:
		eq = fmt.Sprintf("0 */%d * * *", d/time.Hour)
		if d == time.Hour {
			eq = "0 * * * *"
		} else if d == 24*time.Hour {
			eq = "0 0 * * *"
		}
	default:
		// Cron steps restart at each hour/day boundary, so intervals that
		// do not divide it evenly have no exact equivalent.
		return fmt.Sprintf("%s, and cron cannot express an interval of %s exactly: "+
			"choose explicit minutes and hours (%s)", prefix, arg, fieldList)
	}
	return fmt.Sprintf("%s: write the 5-field equivalent %q", prefix, eq)
}

const (
	minuteField = iota
	hourField
	domField
	monthField
	dowField
)

// field describes one of the five positions.
type field struct {
	idx      int
	name     string
	min, max int      // accepted values; day-of-week's max is 7, the Sunday alias
	names    []string // three-letter names; names[i] stands for base+i
	long     []string // full names, only to recognise and correct them
	base     int
	hint     string // appended to out-of-range messages
}

var (
	monthNames = []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
	monthLong  = []string{"JANUARY", "FEBRUARY", "MARCH", "APRIL", "MAY", "JUNE", "JULY", "AUGUST", "SEPTEMBER", "OCTOBER", "NOVEMBER", "DECEMBER"}
	dayNames   = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}
	dayLong    = []string{"SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"}
)

var fields = [5]field{
	{idx: minuteField, name: "minute", min: 0, max: 59},
	{idx: hourField, name: "hour", min: 0, max: 23},
	{idx: domField, name: "day-of-month", min: 1, max: 31},
	{idx: monthField, name: "month", min: 1, max: 12, names: monthNames, long: monthLong, base: 1, hint: " (or JAN-DEC)"},
	{idx: dowField, name: "day-of-week", min: 0, max: 7, names: dayNames, long: dayLong, base: 0, hint: " (0 and 7 both mean Sunday; or SUN-SAT)"},
}

// parse parses one field (a comma list) starting at byte offset off of the
// expression and returns its bitset.
func (f *field) parse(text string, off int) (uint64, error) {
	var bits uint64
	start := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) && text[i] != ',' {
			continue
		}
		if i == start {
			// Point at a comma that borders the hole: the extra one when
			// there is one after it, otherwise the trailing one.
			at := start
			if at == len(text) {
				at--
			}
			return 0, errorf(off+at, "empty entry in %s list: remove the extra comma", f.name)
		}
		b, err := f.parseItem(text[start:i], off+start)
		if err != nil {
			return 0, err
		}
		bits |= b
		start = i + 1
	}
	if f.idx == dowField && bits&(1<<7) != 0 {
		bits = bits&^(1<<7) | 1
	}
	return bits, nil
}

// parseItem parses one list entry: *, a value, a range, each optionally
// with a /step. s is non-empty and begins at byte offset off.
func (f *field) parseItem(s string, off int) (uint64, error) {
	var lo, hi, pos int
	var loText, hiText string
	star, ranged := false, false
	if s[0] == '*' {
		star, lo, hi, pos = true, f.min, f.max, 1
		if pos < len(s) && s[pos] == '-' {
			return 0, errorf(off, "* cannot start a range: write a range as a-b, or use * alone for every %s", f.name)
		}
		if pos < len(s) && isDigit(s[pos]) {
			return 0, errorf(off+pos, "unexpected %q after *: write a step as */%s", s[pos], leadingDigits(s[pos:]))
		}
	} else {
		var err error
		if lo, pos, err = f.value(s, off, 0); err != nil {
			return 0, err
		}
		loText, hi, hiText = s[:pos], lo, s[:pos]
		if pos < len(s) && s[pos] == '-' {
			if pos+1 == len(s) {
				return 0, errorf(off+pos, "range %s is missing its end: write %s-b", s, loText)
			}
			ranged = true
			hiStart := pos + 1
			if hi, pos, err = f.value(s, off, hiStart); err != nil {
				return 0, err
			}
			hiText = s[hiStart:pos]
		}
	}

	step, stepText := 1, ""
	if pos < len(s) && s[pos] == '/' {
		at := pos + 1
		end := at + len(leadingDigits(s[at:]))
		if end == at {
			if at == len(s) {
				return 0, errorf(off+pos, "step is missing its number: write e.g. %s/5", s[:pos])
			}
			return 0, errorf(off+at, "step must be a number, found %q", s[at:])
		}
		step, stepText, pos = atoi(s[at:end]), s[pos:end], end
		if step == 0 {
			return 0, errorf(off+at, "%s step 0 is invalid: a step must be at least 1", f.name)
		}
		if !star && !ranged {
			// a/n means a through the end of the field, as cronie defines it.
			hi = f.max
		}
	}
	if pos < len(s) {
		return 0, f.unexpected(s, off, pos, true)
	}

	if lo > hi {
		return 0, errorf(off, "%s range %s-%s is reversed and ranges do not wrap around: %s",
			f.name, loText, hiText, f.reversedFix(lo, hi, isLetter(loText[0]), stepText))
	}
	var bits uint64
	for v := lo; v <= hi; v += step {
		bits |= 1 << uint(v)
	}
	return bits, nil
}

// reversedFix suggests how to write a range that was meant to wrap.
func (f *field) reversedFix(lo, hi int, useNames bool, step string) string {
	if f.idx == dowField && lo == 7 {
		return fmt.Sprintf("7 means Sunday here, so write %s", f.span(0, hi, useNames, step))
	}
	if f.idx == dowField && hi == 0 {
		// 7 is Sunday too, so the wrap fits in one range; it has no name.
		return fmt.Sprintf("write %d-7%s, since 7 is also Sunday", lo, step)
	}
	last := f.max
	if f.idx == dowField {
		last = 6
	}
	return fmt.Sprintf("write %s,%s to wrap around, or %s to swap the ends",
		f.span(lo, last, useNames, step), f.span(f.min, hi, useNames, step), f.span(hi, lo, useNames, step))
}

func (f *field) span(a, b int, useNames bool, step string) string {
	text := func(v int) string {
		if useNames && f.names != nil && v-f.base < len(f.names) {
			return f.names[v-f.base]
		}
		return fmt.Sprint(v)
	}
	if a == b {
		return text(a)
	}
	return text(a) + "-" + text(b) + step
}

// value parses a number or name at s[pos:] and returns it with the
// position just past it.
func (f *field) value(s string, off, pos int) (int, int, error) {
	c := s[pos]
	switch {
	case isDigit(c):
		end := pos + len(leadingDigits(s[pos:]))
		if end < len(s) && isLetter(s[end]) {
			if err := f.quartzLetter(string(upper(s[end])), off+end); err != nil {
				return 0, end, err
			}
			return 0, end, f.unexpected(s, off, end, true)
		}
		n := atoi(s[pos:end])
		if n < f.min || n > f.max {
			return 0, end, errorf(off+pos, "%s %s is out of range %d-%d%s%s", f.name, s[pos:end], f.min, f.max, f.hint, f.rangeAdvice(n))
		}
		return n, end, nil
	case isLetter(c):
		end := pos
		for end < len(s) && isLetter(s[end]) {
			end++
		}
		n, err := f.lookup(s[pos:end], off+pos)
		return n, end, err
	}
	return 0, pos, f.unexpected(s, off, pos, false)
}

func (f *field) rangeAdvice(n int) string {
	switch {
	case f.idx == minuteField && n == 60:
		return ": use 0 for the top of the hour"
	case f.idx == hourField && n == 24:
		return ": use 0 for midnight"
	case f.idx == domField && n == 0:
		return ": days of the month start at 1"
	case f.idx == monthField && n == 0:
		return ": months start at 1 (JAN)"
	}
	return ""
}

// lookup resolves a month or weekday name, case-insensitively.
func (f *field) lookup(tok string, off int) (int, error) {
	up := strings.ToUpper(tok)
	if err := f.quartzLetter(up, off); err != nil {
		return 0, err
	}
	if f.names == nil {
		return 0, errorf(off, "%s field takes numbers %d-%d, not names like %q", f.name, f.min, f.max, tok)
	}
	for i, n := range f.names {
		if up == n {
			return f.base + i, nil
		}
	}
	for i, l := range f.long {
		if len(up) > 3 && strings.HasPrefix(l, up) {
			return 0, errorf(off, "cron takes three-letter %s names: write %s instead of %q", f.name, f.names[i], tok)
		}
	}
	other := &fields[monthField]
	if f.idx == monthField {
		other = &fields[dowField]
	}
	for _, n := range other.names {
		if up == n {
			return 0, errorf(off, "%s is a %s name, but this is the %s field, which takes %s-%s or %d-%d",
				n, other.name, f.name, f.names[0], f.names[len(f.names)-1], f.min, f.max)
		}
	}
	best, bestDist := "", len(up)+len("SEPTEMBER")
	for i, n := range f.names {
		if d := min(editdist.Distance(up, n), editdist.Distance(up, f.long[i])); d < bestDist {
			best, bestDist = n, d
		}
	}
	return 0, errorf(off, "unknown %s name %q: did you mean %s? (names are %s)", f.name, tok, best, strings.Join(f.names, " "))
}

// quartzLetter rejects the Quartz scheduler's day-field letters, which
// people often copy from Java or Spring documentation.
func (f *field) quartzLetter(up string, off int) error {
	switch {
	case f.idx == domField && (up == "L" || up == "LW"):
		return errorf(off, `"L" (last day of the month) is Quartz syntax, not standard cron, which cannot express the last day: `+
			"use 28-31 and check the date in the job")
	case f.idx == domField && up == "W":
		return errorf(off, `"W" (nearest weekday) is Quartz syntax, not standard cron, which has no equivalent: list the days explicitly`)
	case f.idx == dowField && up == "L":
		return errorf(off, `"L" (last weekday of the month) is Quartz syntax, not standard cron, which cannot express it: `+
			"schedule the weekday and check the date in the job")
	}
	return nil
}

// unexpected reports the character at s[pos], explaining the common
// foreign syntaxes rather than just naming the character. afterValue says
// whether a complete value precedes it, which changes what was expected.
func (f *field) unexpected(s string, off, pos int, afterValue bool) error {
	r, _ := utf8.DecodeRuneInString(s[pos:])
	switch r {
	case '?':
		return errorf(off+pos, `"?" is Quartz syntax, not standard cron: use * instead`)
	case '#':
		// Vixie ORs restricted day fields, so "8-14 * 1" is not "second Monday".
		return errorf(off+pos, `"#" (nth weekday of the month) is Quartz syntax, not standard cron, which cannot express it `+
			"because restricted day-of-month and day-of-week are ORed: schedule the weekday and check the date in the job")
	case '–', '—', '−':
		return errorf(off+pos, "%q is not an ASCII hyphen: write ranges with '-'", r)
	case '*':
		return errorf(off+pos, "* must stand alone or be followed by a step, as in */5")
	case '/':
		if pos == 0 {
			n := leadingDigits(s[1:])
			if n == "" {
				n = "n"
			}
			return errorf(off, "a step needs something to step through: write */%s or a-b/%s", n, n)
		}
	}
	if afterValue {
		return errorf(off+pos, "unexpected %q after %q in %s entry %q: separate entries with ',' and write steps as /n",
			r, s[:pos], f.name, s)
	}
	want := "a number"
	if f.names != nil {
		want = "a number or name"
	}
	return errorf(off+pos, "unexpected %q in %s entry %q: expected %s, a range a-b, * or a /step", r, f.name, s, want)
}

// atoi saturates instead of overflowing: any value this large is already
// out of range, and steps beyond a field's width behave identically.
func atoi(digits string) int {
	n := 0
	for i := 0; i < len(digits); i++ {
		n = min(n*10+int(digits[i]-'0'), 1<<20)
	}
	return n
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}
