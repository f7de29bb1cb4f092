package workflow

import (
	"strings"
	"unicode"
)

// WordsError is a command Words cannot split: where, what and how to fix it.
type WordsError struct {
	// Offset is the byte offset in the command of what is wrong (the opening quote, the
	// trailing backslash).
	Offset int
	// Problem is what is wrong, Fix how to write it instead.
	Problem, Fix string
}

func (e *WordsError) Error() string {
	if e.Fix == "" {
		return e.Problem
	}
	return e.Problem + " (" + e.Fix + ")"
}

// Words splits a command into words by shell rules (blanks separate; 'single quotes' keep
// everything; "double quotes" keep everything but \" \\ \$ and \`; a backslash outside quotes
// keeps the next character). Nothing is expanded, and no operator (; | & > <) means anything:
// each word is an argument as written. It is the one parser of a step's command: the runtime
// runs what it gives, and Validate refuses what it cannot split (a *WordsError).
func Words(s string) ([]string, error) {
	out, _, err := wordsAt(s)
	return out, err
}

// wordsAt is Words with the byte offset in s at which each word starts.
func wordsAt(s string) ([]string, []int, error) {
	var out []string
	var at []int
	var cur strings.Builder
	in := false // a word is under way
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case !in && c != ' ' && c != '\t' && c != '\n':
			at = append(at, i)
			i-- // read it again, as part of the word
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, nil, &WordsError{Offset: i, Problem: "unterminated ' in the command"}
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			open := i
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, nil, &WordsError{Offset: open, Problem: `unterminated " in the command`}
			}
			in = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, nil, &WordsError{Offset: i, Problem: "the command ends with a backslash", Fix: `escape it: \\`}
			}
			i++
			cur.WriteByte(s[i])
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out, at, nil
}

// restOffset is the byte offset in a command of what follows its namespace (Step.Rest).
func restOffset(command string) int {
	lead := len(command) - len(strings.TrimLeftFunc(command, unicode.IsSpace))
	i := strings.IndexByte(command[lead:], ' ')
	if i < 0 {
		return len(command)
	}
	after := command[lead+i+1:]
	return lead + i + 1 + len(after) - len(strings.TrimLeftFunc(after, unicode.IsSpace))
}
