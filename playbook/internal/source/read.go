package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is the error of a path that is no regular file: a directory, a FIFO, a device or
// a socket (or a symbolic link to one). Reading one would block (a FIFO) or never end (/dev/zero).
var ErrNotRegular = errors.New("not a regular file (a directory, FIFO, device or socket): give a regular file")

// TooLargeError is the error of a file over the limit a reader allows.
type TooLargeError struct {
	// Size is the file's size, or -1 when it grew past Limit while it was read.
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("the file grew past %d bytes while it was read; the limit is %d", e.Limit, e.Limit)
	}
	return fmt.Sprintf("the file is %d bytes; the limit is %d", e.Size, e.Limit)
}

// ReadFile reads the regular file at path, at most limit bytes. Anything else is refused without
// waiting on it: a FIFO is opened without blocking and refused, as are a device, a socket and a
// directory (ErrNotRegular), and a file over limit, or one that grows past it while it is read
// (*TooLargeError). The errors are *fs.PathError, naming path.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: &TooLargeError{Size: info.Size(), Limit: limit}}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: &TooLargeError{Size: -1, Limit: limit}}
	}
	return data, nil
}

// OpenRegular opens the regular file at path for reading. Anything else is refused without
// waiting on it: a FIFO is opened without blocking and refused, as are a device, a socket and a
// directory (ErrNotRegular, in a *fs.PathError naming path).
func OpenRegular(path string) (*os.File, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &fs.PathError{Op: "read", Path: path, Err: ErrNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Reason is err without the path a *fs.PathError adds: what to print after the path.
func Reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if os.IsNotExist(pe.Err) {
			return "no such file or directory"
		}
		return pe.Err.Error()
	}
	return err.Error()
}
