// Package cliout is how every autonomy command prints, whichever package contributes it: JSON
// as the commands write it, and text from outside (an agent's words, a param) made safe for a
// terminal.
package cliout

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/autonomyhq/autonomy/internal/exitcode"
)

// WriteJSON writes v indented, HTML left unescaped; a failure is a usage or I/O error (exit 2).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return exitcode.Usagef("%v", err)
	}
	return nil
}

// ShellWord is s as one word a POSIX shell (sh, bash, zsh) reads back as s: as it is when it
// holds only letters, digits and -_./:@%+, in single quotes otherwise (an empty s is a pair of
// them). A command line printed for a person to paste is built of such words. (A word starting
// with = is zsh's path of a command, so = is quoted.)
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TerminalSafe is s with its control characters, its bidirectional controls (U+202E and the
// like, which reorder what follows them on the line) and invalid UTF-8 escaped as Go does in a
// quoted string, so that printing it cannot move the cursor, recolor the terminal or show text in
// an order it does not have.
func TerminalSafe(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || r == utf8.RuneError || unicode.Is(unicode.Bidi_Control, r)
	}) < 0 {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// SortedKeys are the keys of m, sorted.
func SortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Count is "1 noun" or "n nouns".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// ParamsLine is a session's params as one line of NAME="VALUE", each value Go-quoted, sorted by
// name: a session list's PARAMS column.
func ParamsLine(p map[string]string) string {
	var b strings.Builder
	for i, k := range SortedKeys(p) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", k, p[k])
	}
	return b.String()
}
