//go:build !unix

package ghproxy

import (
	"context"
	"errors"
	"io"
)

// Jail needs Linux: GitHub's Windows and macOS runners have no network namespaces.
func Jail(context.Context, func(string) string, []string, io.Reader, io.Writer, io.Writer) (int, error) {
	return 0, errors.New("gh jail needs a Linux runner (bubblewrap's network namespaces)")
}
