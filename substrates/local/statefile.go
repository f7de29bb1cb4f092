package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/internal/cliout"
)

// The supervisor writes files under the state folder (results, logs, outputs, copies kept
// aside) outside any sandbox, and an agent working in the installation root can write there
// too: it could put a symbolic link where the supervisor is about to write (its own result file,
// its log), and have the supervisor write what the agent chose through it, outside the sandbox
// (a ~/.bashrc). So these files are never opened through a link: a new file is created
// exclusively after removing whatever is at its path (a link is removed, not followed), and a
// file that is continued is opened with O_NOFOLLOW.

// logPath is where session id's log is: computed from the id, never read from the database,
// which an agent working in the installation root can write (a log path naming ~/.bashrc would
// have the supervisor append the session's output there). ok is false for an id the store does
// not make (digits, a dash, letters and digits).
func (in *Install) logPath(id string) (string, bool) {
	if !validID(id) {
		return "", false
	}
	return in.Path(StateDir + "/logs/" + id + ".log"), true
}

// supervisorErrPath is where session id's detached supervisor's stderr goes (logPath's folder).
func (in *Install) supervisorErrPath(id string) (string, bool) {
	path, ok := in.logPath(id)
	return strings.TrimSuffix(path, ".log") + ".supervisor", ok
}

// maxSupervisorSaid is the most of a supervisor's stderr a reason quotes.
const maxSupervisorSaid = 2 << 10

// supervisorSaid is what session id's detached supervisor wrote on its stderr, its last
// maxSupervisorSaid bytes, one line, made safe to print; "" when nothing (or it cannot be read).
func (in *Install) supervisorSaid(id string) string {
	path, ok := in.supervisorErrPath(id)
	if !ok {
		return ""
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	off := max(fi.Size()-maxSupervisorSaid, 0)
	buf := make([]byte, fi.Size()-off)
	n, _ := f.ReadAt(buf, off)
	text := strings.Join(strings.Fields(strings.ToValidUTF8(string(buf[:n]), "?")), " ")
	return cliout.TerminalSafe(text)
}

// createNew creates path as a new, empty regular file (perm), whatever was there (a link, a file)
// removed first.
func createNew(path string, perm fs.FileMode) (*os.File, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

// writeNew writes data to path as a new file (createNew).
func writeNew(path string, data []byte, perm fs.FileMode) error {
	f, err := createNew(path, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// freshDir makes path a new, empty folder of this process's (whatever was there, a link too,
// removed) and opens it as a root that nothing written under it can leave.
func freshDir(path string) (*os.Root, error) {
	if err := os.RemoveAll(path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		return nil, err
	}
	return os.OpenRoot(path)
}

// maxResultFile caps a result file the supervisor reads (as the GitHub Actions substrate's).
const maxResultFile = 1 << 20

// readResultFile reads a file a session writes for the supervisor (its result, a reviewer's
// verdict): never through a link (O_NOFOLLOW), never blocking on a FIFO (O_NONBLOCK, then only a
// regular file is read), never more than maxResultFile bytes. A session can plant any of these
// where another session's result goes; none makes the supervisor hang, read without end, or
// read what a link points to.
func readResultFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v): a result is a plain file, never a link, a FIFO or a device", path, fi.Mode().Type())
	}
	data, err := bounded.Read(f, maxResultFile)
	if bounded.IsTooLarge(err) {
		return nil, fmt.Errorf("%s is larger than %d bytes, the cap on a result", path, maxResultFile)
	}
	return data, err
}

// ownResultPath is where session id writes its result (AUTONOMY_RESULT): result.json in a new,
// empty folder of its own, results/<id>.session, which its jail alone leaves writable (confine),
// so that no other session can write there; its result path proper, results/<id>.json, is
// cleared, and is written by the supervisor alone once the session exits (adoptResult).
func (in *Install) ownResultPath(id string) (string, error) {
	if err := removeStale(in.Path(StateDir + "/results/" + id + ".json")); err != nil {
		return "", err
	}
	dir := in.Path(StateDir + "/results/" + id + ".session")
	root, err := freshDir(dir)
	if err != nil {
		return "", fmt.Errorf("cannot make the session's result folder: %v", err)
	}
	_ = root.Close()
	return filepath.Join(dir, "result.json"), nil
}

// adoptResult makes the result a session wrote (own, if it wrote one) its result proper (path),
// read as readResultFile reads it.
func adoptResult(own, path string) error {
	data, err := readResultFile(own)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("its result cannot be read: %v (write one JSON object, a plain file of at most 1 MiB, where AUTONOMY_RESULT says, or call submit_result)", err)
	}
	return writeNew(path, data, 0o600)
}

// removeStale removes whatever is at path (a file, a link, a FIFO, a folder), nothing when there is
// nothing: a session's result path is emptied before it starts, so that a result another session
// planted there is never taken for its own.
func removeStale(path string) error {
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("cannot clear %s before the session starts: %v", path, err)
	}
	return nil
}
