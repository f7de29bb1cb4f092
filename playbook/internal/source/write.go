package source

import (
	"io/fs"
	"os"
)

// WriteFile writes data to the file at path, creating it with perm, replacing what it holds, or
// appending to it when appendTo is true. Only a regular file is written: a FIFO, a device, a
// socket and a directory are refused (ErrNotRegular, in a *fs.PathError naming path), a FIFO
// without blocking on it (one swapped in after the check is opened without blocking and refused);
// nothing is truncated before the file is known to be regular.
func WriteFile(path string, data []byte, perm fs.FileMode, appendTo bool) error {
	if err := CheckRegular(path); err != nil {
		return err
	}
	flag := os.O_WRONLY | os.O_CREATE
	if appendTo {
		flag |= os.O_APPEND
	}
	f, err := openWriteNonBlocking(path, flag, perm)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &fs.PathError{Op: "write", Path: path, Err: ErrNotRegular}
	}
	if err == nil && !appendTo {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// CheckRegular refuses a path that exists and is no regular file (ErrNotRegular, in a
// *fs.PathError naming path), without opening it: a FIFO, a device, a socket, a directory. A
// path that does not exist passes.
func CheckRegular(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	if !info.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return nil
}
