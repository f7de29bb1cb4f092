package substrates

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffContext is how many unchanged lines surround a change in a hunk, as in diff -u and git.
const diffContext = 3

// diffLine is one line of a line-level diff: ' ' kept, '-' only on disk, '+' only compiled. text
// keeps its "\n", so a last line without one is visible.
type diffLine struct {
	op   byte
	text string
}

// UnifiedDiff shows how to get from the file on disk to the compiled one, in the unified format
// patch(1) and every code review tool read: "---"/"+++" headers, hunks with three lines of
// context (merged when closer than that), "@@ -l,n +l,n @@" ranges (",n" left out when n is 1, as
// diff -u does), and "\ No newline at end of file" after a last line without one. Identical
// inputs give "".
func UnifiedDiff(path string, onDisk, compiled []byte) string {
	if string(onDisk) == string(compiled) {
		return ""
	}
	lines := lineDiff(string(onDisk), string(compiled))
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s (on disk)\n+++ %s (compiled)\n", path, path)
	// before[i] counts the lines of each side ahead of lines[i].
	type counts struct{ old, new int }
	before := make([]counts, len(lines)+1)
	for i, l := range lines {
		c := before[i]
		if l.op != '+' {
			c.old++
		}
		if l.op != '-' {
			c.new++
		}
		before[i+1] = c
	}
	for _, h := range hunks(lines) {
		start, end := h[0], h[1]
		fmt.Fprintf(&b, "@@ -%s +%s @@\n",
			hunkRange(before[start].old, before[end].old-before[start].old),
			hunkRange(before[start].new, before[end].new-before[start].new))
		for _, l := range lines[start:end] {
			b.WriteByte(l.op)
			b.WriteString(l.text)
			if !strings.HasSuffix(l.text, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return b.String()
}

// maxDiffLines bounds the lines lineDiff hands to go-diff, which numbers distinct lines with runes
// and panics past about 1.1 million of them.
const maxDiffLines = 1_000_000

// lineDiff diffs two texts line by line: go-diff's line mode maps each distinct line to one rune,
// diffs the runes, and maps them back. Texts too long for it are shown as replaced whole.
func lineDiff(a, b string) []diffLine {
	var diffs []diffmatchpatch.Diff
	if strings.Count(a, "\n")+strings.Count(b, "\n")+2 > maxDiffLines {
		diffs = []diffmatchpatch.Diff{{Type: diffmatchpatch.DiffDelete, Text: a}, {Type: diffmatchpatch.DiffInsert, Text: b}}
	} else {
		dmp := diffmatchpatch.New()
		ra, rb, table := dmp.DiffLinesToRunes(a, b)
		diffs = dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), table)
	}
	var out []diffLine
	for _, d := range diffs {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for text := d.Text; text != ""; {
			i := strings.IndexByte(text, '\n') + 1
			if i == 0 {
				i = len(text)
			}
			out = append(out, diffLine{op: op, text: text[:i]})
			text = text[i:]
		}
	}
	return out
}

// hunks groups the changed lines into [start, end) ranges of lines, each with up to diffContext
// lines of context either side; changes at most 2*diffContext unchanged lines apart share a hunk,
// since their contexts would touch.
func hunks(lines []diffLine) [][2]int {
	var out [][2]int
	for i := 0; i < len(lines); {
		if lines[i].op == ' ' {
			i++
			continue
		}
		start := max(i-diffContext, 0)
		end := i
		for {
			for end < len(lines) && lines[end].op != ' ' {
				end++
			}
			next := end
			for next < len(lines) && lines[next].op == ' ' {
				next++
			}
			if next < len(lines) && next-end <= 2*diffContext {
				end = next
				continue
			}
			end = min(end+diffContext, len(lines))
			break
		}
		out = append(out, [2]int{start, end})
		i = end
	}
	return out
}

// hunkRange writes one side's range of a hunk header: the first line and the count, where an
// empty range names the line before it, as diff -u does.
func hunkRange(before, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}
