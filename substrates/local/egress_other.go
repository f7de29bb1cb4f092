//go:build !unix

package local

import "context"

// wallState does nothing: the runner refuses to run sessions here.
func (sv *supervision) wallState() {}

// confine leaves argv as it is: the runner refuses to run sessions here.
func (sv *supervision) confine(context.Context, []string, bool) ([]string, func(), error) {
	return nil, func() {}, checkOS()
}
