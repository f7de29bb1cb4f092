package bounded

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// endless is a reader that never ends: Read must stop one byte past its bound.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.read += int64(len(p))
	return len(p), nil
}

func TestReadRefusesMoreThanItsBound(t *testing.T) {
	if data, err := Read(strings.NewReader("12345"), 5); err != nil || string(data) != "12345" {
		t.Errorf("at the bound: %q, %v", data, err)
	}
	_, err := Read(strings.NewReader("123456"), 5)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Max != 5 || err.Error() != "larger than 5 bytes" {
		t.Errorf("one byte over: %v", err)
	}
	e := &endless{}
	if _, err := Read(io.LimitReader(e, 1<<40), 1<<10); !IsTooLarge(err) {
		t.Errorf("an endless reader: %v", err)
	}
	if e.read > 64<<10 {
		t.Errorf("read %d bytes of an endless reader for a bound of 1 KiB", e.read)
	}
}

func TestReadFileNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big")
	if err := os.WriteFile(p, bytes.Repeat([]byte("a"), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(p, 100); err != nil || len(data) != 100 {
		t.Errorf("at the bound: %d bytes, %v", len(data), err)
	}
	_, err := ReadFile(p, 99)
	if !IsTooLarge(err) || err.Error() != p+" is larger than 99 bytes" {
		t.Errorf("over the bound: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) || IsTooLarge(err) {
		t.Errorf("a missing file: %v", err)
	}
}
