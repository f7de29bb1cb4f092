// Package exitcode holds what every autonomy command shares, whichever package contributes it
// (cmd/autonomy, or a substrate's own commands): the exit codes, the error that carries one
// through cobra, and the --format check.
package exitcode

import "fmt"

// The exit codes of every command.
const (
	OK       = 0
	Problems = 1
	Usage    = 2
)

// Error carries a command's exit code through cobra. An Error with no message has
// already reported itself.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Problemf is a refusal or a problem found (exit 1), saying what.
func Problemf(format string, args ...any) error {
	return &Error{Code: Problems, Msg: fmt.Sprintf(format, args...)}
}

// Usagef is an error in how the command was called, or an I/O failure (exit 2).
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Msg: fmt.Sprintf(format, args...)}
}

// CheckFormat refuses an unknown --format value.
func CheckFormat(format string, valid ...string) error {
	for _, v := range valid {
		if format == v {
			return nil
		}
	}
	return Usagef("unknown --format %q (valid: %v)", format, valid)
}
