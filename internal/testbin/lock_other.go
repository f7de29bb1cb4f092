//go:build !unix

package testbin

// lock does not lock where flock is missing (Windows): each test process builds, Go's build
// cache making all but the first cheap, and a binary already in place is kept.
func lock(string) (func(), error) { return func() {}, nil }
