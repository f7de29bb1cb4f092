package ir

import (
	"fmt"
	"strconv"
	"strings"
)

// CondenseShown is how many actors a condensed warning names with their positions.
const CondenseShown = 3

// Condense returns ds, sorted, with every warning that has more than CondenseShown occurrences
// differing only by the actor they name (one cause, repeated across a fleet) reported once: at
// its first position, naming the next actors with theirs and counting the rest ("… and 4,212 more
// actors"). Errors are never condensed. The order is ds's; ds itself is not changed.
func (ds Diagnostics) Condense() Diagnostics {
	groups := map[string][]int{}
	var order []string
	for i, d := range ds {
		k := causeKey(d)
		if k == "" {
			continue
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	drop := map[int]bool{}
	merged := map[int]string{}
	for _, k := range order {
		idx := groups[k]
		if len(idx) <= CondenseShown {
			continue
		}
		merged[idx[0]] = condensedMessage(ds, idx)
		for _, i := range idx[1:] {
			drop[i] = true
		}
	}
	if len(drop) == 0 {
		return ds
	}
	out := make(Diagnostics, 0, len(ds)-len(drop))
	for i, d := range ds {
		if drop[i] {
			continue
		}
		if m, ok := merged[i]; ok {
			d.Message = m
		}
		out = append(out, d)
	}
	return out
}

// causeKey is what warnings of one cause share: the file, the hint and the message without the
// actor's name; "" for a diagnostic that names no actor or is an error.
func causeKey(d Diagnostic) string {
	if d.Severity != Warning {
		return ""
	}
	before, _, after, ok := actorIn(d.Message)
	if !ok {
		return ""
	}
	return d.File + "\x00" + d.Hint + "\x00" + before + "\x00" + after
}

// condensedMessage is the first warning's message followed by the next actors, each with its
// position, and the count of the others.
func condensedMessage(ds Diagnostics, idx []int) string {
	var b strings.Builder
	b.WriteString(ds[idx[0]].Message)
	b.WriteString("; also")
	for k, i := range idx[1:CondenseShown] {
		if k > 0 {
			b.WriteByte(',')
		}
		_, name, _, _ := actorIn(ds[i].Message)
		line, col := ds[i].Pos.Line, ds[i].Pos.Col
		if line < 1 {
			line, col = 1, 1
		}
		fmt.Fprintf(&b, " actor %q at %s:%d:%d", name, ds[i].File, line, col)
	}
	// An actor can repeat a cause (two event triggers): count the actors, and the places apart
	// when they differ.
	seen := map[string]bool{}
	for _, i := range idx[:CondenseShown] {
		_, name, _, _ := actorIn(ds[i].Message)
		seen[name] = true
	}
	actors := 0
	for _, i := range idx[CondenseShown:] {
		if _, name, _, _ := actorIn(ds[i].Message); !seen[name] {
			seen[name] = true
			actors++
		}
	}
	if rest := len(idx) - CondenseShown; rest != actors {
		fmt.Fprintf(&b, " … and %s more places (%s more actors)", thousands(rest), thousands(actors))
	} else {
		fmt.Fprintf(&b, " … and %s more actors", thousands(actors))
	}
	return b.String()
}

// thousands writes n with a comma every three digits: 4212 gives "4,212".
func thousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
