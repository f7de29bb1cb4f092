//go:build !unix

package local

import "errors"

// tryLock has no implementation off Unix, where the local runner does not run.
func tryLock(path string, exclusive bool) (release func(), held bool, err error) {
	return nil, false, errors.New("the local runner needs a Unix-like OS (Linux or macOS)")
}
