// Package bounded reads input whose size autonomy does not control (a file a session wrote, a
// request's body) up to a bound, and refuses more: it reads at most one byte past the bound,
// never the whole input, so a huge or endless input costs no more memory than the bound.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// TooLargeError is the error for an input of more than Max bytes. ReadFile wraps it with the
// file's path; errors.As finds it in either case.
type TooLargeError struct {
	Path string // "" for a reader
	Max  int64
}

func (e *TooLargeError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("larger than %d bytes", e.Max)
	}
	return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Max)
}

// IsTooLarge reports whether err is (or wraps) a TooLargeError.
func IsTooLarge(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl)
}

// Read reads r to its end, refusing (a *TooLargeError) an input of more than max bytes.
func Read(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Max: max}
	}
	return data, nil
}

// ReadFile reads the file at path, refusing (a *TooLargeError naming path) one of more than max
// bytes. The file is opened as it is: a caller that must refuse a link or a FIFO checks first.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := Read(f, max)
	if tl, ok := err.(*TooLargeError); ok {
		tl.Path = path
	}
	return data, err
}
