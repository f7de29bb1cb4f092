package local

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
)

// The door of a walled session (docs/local.md, "The wall"). A preset's session that works in the
// installation root behind the model proxy has the runner's state read-only in its jail
// (wallState), so its shell cannot write the store: its runner verbs (autonomy runner launch,
// list, get, update, cancel, logs) and the writes of its gh and bun shims go through the door
// instead. The door is a folder in the session's own result folder (results/<id>.session/door),
// the one part of the installation its jail leaves writable, and no other session's jail does:
// what is written there can only come from inside this session (or from outside every jail,
// where the store is writable anyway). The shell writes the verb there as a request; the
// session's supervisor, outside the jail, runs it as `autonomy runner VERB …` with the
// session's environment, a process of the session (its descendant), so the runner's own checks
// (capabilities, @scope, caps, the wall) apply as they would to any runner verb of the session,
// and writes back what it printed and its exit code. A request names no session: which session
// it is from is where it was written, never what the shell's environment says.

// DoorEnv is set, to 1, in the environment of a verb the supervisor runs for the door: its gh and
// bun read the files the shell's command read from their stdin (DoorRequest.Files), and pass
// nothing to the real programs.
const DoorEnv = "AUTONOMY_DOOR"

// doorFolder is the door, in the session's own result folder.
const doorFolder = "door"

const (
	// doorWait is how long the shell waits for its verb's answer, and the supervisor lets a
	// verb run before it kills it.
	doorWait = 2 * time.Minute
	// maxDoorFile caps a request or an answer (and what a verb prints into one).
	maxDoorFile = 1 << 20
	// maxDoorPerLook caps the requests one look of the supervisor takes up.
	maxDoorPerLook = 16
)

// doorVerbs are the verbs a shell may ask through the door: the runner verbs a session has, and
// the shims'.
var doorVerbs = []string{"launch", "list", "get", "update", "cancel", "logs", "gh", "bun"}

// doorFlagsOff are the runner's flags a door request may not set: it acts on this installation,
// on the local runner.
var doorFlagsOff = []string{"dir", "target", "kubeconfig", "namespace"}

// DoorRequest is one verb asked through the door.
type DoorRequest struct {
	// Verb is one of the door's verbs; Args its words. For a runner verb they are flags as
	// --NAME=VALUE, then "--", then its arguments; for gh and bun the command's own words.
	Verb string   `json:"verb"`
	Args []string `json:"args,omitempty"`
	// Files are the files (by the name the command gave, "-" for stdin) a gh command read in
	// the shell, where the supervisor cannot read them as the shell did.
	Files map[string][]byte `json:"files,omitempty"`
}

// DoorAnswer is what the verb printed, and its exit code.
type DoorAnswer struct {
	Code   int    `json:"code"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// Door is the door of the session this process runs in, seen from its shell.
type Door struct {
	dir string
}

// DoorOf is the door of session in the installation dir, when this process should use it: the
// runner's state is read-only here (a walled session's jail) and the session's door is writable
// (it is this process's own session: no other session's door is). ok is false otherwise, and
// the verb runs as before (refused where the state is read-only).
func DoorOf(dir, session string) (d *Door, ok bool) {
	if !validID(session) {
		return nil, false
	}
	state := filepath.Join(dir, filepath.FromSlash(StateDir))
	door := filepath.Join(state, "results", session+".session", doorFolder)
	if writableDir(state) || !writableDir(door) {
		return nil, false
	}
	return &Door{dir: door}, true
}

// validID reports whether id has the shape of a session id (SEQ-TAG).
func validID(id string) bool {
	seq, tag, found := strings.Cut(id, "-")
	return found && seq != "" && tag != "" && strings.Trim(seq, "0123456789") == "" && strings.Trim(tag, "abcdefghijklmnopqrstuvwxyz0123456789") == ""
}

// writableDir reports whether this process can create a file in dir.
func writableDir(dir string) bool {
	f, err := os.CreateTemp(dir, ".writable-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// Call asks req through the door and waits for its answer.
func (d *Door) Call(ctx context.Context, req DoorRequest) (DoorAnswer, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return DoorAnswer{}, err
	}
	if len(data) > maxDoorFile {
		return DoorAnswer{}, fmt.Errorf("the request is larger than %d bytes", maxDoorFile)
	}
	name, err := randomName()
	if err != nil {
		return DoorAnswer{}, err
	}
	answer := filepath.Join(d.dir, name+".answer")
	if err := writeRenamed(d.dir, name+".req", data); err != nil {
		return DoorAnswer{}, fmt.Errorf("cannot write to the session's door %s: %v", d.dir, err)
	}
	deadline := time.Now().Add(doorWait + 10*time.Second)
	for {
		b, err := readResultFile(answer)
		if err == nil {
			os.Remove(answer)
			var a DoorAnswer
			if err := json.Unmarshal(b, &a); err != nil {
				return DoorAnswer{}, fmt.Errorf("the runner's answer cannot be read: %v", err)
			}
			return a, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return DoorAnswer{}, err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			os.Remove(filepath.Join(d.dir, name+".req"))
			return DoorAnswer{}, fmt.Errorf("the runner did not answer within %s: is the session's supervisor running?", doorWait)
		}
		time.Sleep(effectPoll)
	}
}

// randomName is a request's name.
func randomName() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeRenamed writes data to dir/name through a new file renamed over it.
func writeRenamed(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(data)
	return firstErr(werr, f.Close(), os.Rename(f.Name(), filepath.Join(dir, name)))
}

// openDoor serves the door of the walled session sv until closeDoor is called (once its agent
// has exited, before its supervisor adopts what it launched for the last time: a launch through
// the door is adopted). A session whose state is not walled (sv.stateAt unset) has no door: its
// store is writable.
func (sv *supervision) openDoor(ctx context.Context) {
	sv.closeDoor = sync.OnceFunc(sv.doorWhile(ctx))
}

// doorWhile makes the door and serves it until the returned function is called.
func (sv *supervision) doorWhile(ctx context.Context) func() {
	if sv.stateAt == "" {
		return func() {}
	}
	root, err := os.OpenRoot(filepath.Dir(sv.ownResult))
	if err == nil {
		if err = root.Mkdir(doorFolder, 0o700); err == nil {
			var door *os.Root
			door, err = root.OpenRoot(doorFolder)
			root.Close()
			root = door
		}
	}
	if err != nil {
		fmt.Fprintf(sv.logf, "autonomy: cannot make the session's door (its shell's runner verbs are refused): %v\n", err)
		if root != nil {
			root.Close()
		}
		return func() {}
	}
	// Its end stops a verb under way (a logs -f), rather than waiting for it.
	ctx, cancel := context.WithCancel(ctx)
	stop := sv.r.every(ctx, effectPoll, func() { sv.serveDoor(ctx, root) })
	return func() { cancel(); stop(); root.Close() }
}

// serveDoor answers the requests waiting at the door, in the order of their names.
func (sv *supervision) serveDoor(ctx context.Context, door *os.Root) {
	dir, err := door.Open(".")
	if err != nil {
		return
	}
	names, _ := dir.Readdirnames(256)
	dir.Close()
	slices.Sort(names)
	n := 0
	for _, name := range names {
		id, ok := strings.CutSuffix(name, ".req")
		if !ok || len(id) != 24 || strings.Trim(id, "0123456789abcdef") != "" {
			continue
		}
		if n++; n > maxDoorPerLook || ctx.Err() != nil {
			return
		}
		a := sv.answerDoor(ctx, door, name)
		if b, err := json.Marshal(a); err == nil {
			_ = writeInRoot(door, id+".answer", b)
		}
	}
}

// answerDoor reads and removes request name, and runs it.
func (sv *supervision) answerDoor(ctx context.Context, door *os.Root, name string) DoorAnswer {
	f, err := door.OpenFile(name, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	_ = door.RemoveAll(name) // a folder too: each request is answered once
	if err != nil {
		return DoorAnswer{Code: 2, Stderr: fmt.Sprintf("autonomy: the request cannot be read: %v\n", err)}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return DoorAnswer{Code: 2, Stderr: "autonomy: a request is a plain file\n"}
	}
	data, err := bounded.Read(f, maxDoorFile)
	var req DoorRequest
	if err == nil {
		err = json.Unmarshal(data, &req)
	}
	if err != nil {
		return DoorAnswer{Code: 2, Stderr: fmt.Sprintf("autonomy: the request cannot be read: %v\n", err)}
	}
	return sv.runDoor(ctx, req)
}

// doorArgs checks req and returns the words of the verb it asks, after `autonomy runner`.
func doorArgs(req DoorRequest) ([]string, error) {
	if !slices.Contains(doorVerbs, req.Verb) {
		return nil, fmt.Errorf("%q is not a verb a session asks through its door (%s)", req.Verb, strings.Join(doorVerbs, ", "))
	}
	if req.Verb == "gh" || req.Verb == "bun" {
		return append([]string{req.Verb}, req.Args...), nil
	}
	out := []string{req.Verb}
	for i, w := range req.Args {
		if w == "--" {
			return append(out, req.Args[i:]...), nil
		}
		name, _, ok := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		if !strings.HasPrefix(w, "--") || !ok || name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz-") != "" || slices.Contains(doorFlagsOff, name) {
			return nil, fmt.Errorf("%q: a door request's flags are --NAME=VALUE, then --, then its arguments; %s are not a session's to set", w, strings.Join(doorFlagsOff, ", "))
		}
		out = append(out, w)
	}
	return append(out, "--"), nil
}

// runDoor runs req as `autonomy runner VERB …`, a process of this session, with the session's
// environment (its state at its own path: this process is outside the jail; the installation
// named by DirEnv).
func (sv *supervision) runDoor(ctx context.Context, req DoorRequest) DoorAnswer {
	args, err := doorArgs(req)
	if err != nil {
		return DoorAnswer{Code: 2, Stderr: "autonomy: " + err.Error() + "\n"}
	}
	exe, err := sv.r.exe()
	if err != nil {
		return DoorAnswer{Code: 2, Stderr: "autonomy: " + err.Error() + "\n"}
	}
	ctx, cancel := context.WithTimeout(ctx, doorWait)
	defer cancel()
	// The installation is named by DirEnv: a flag before gh or bun would be one of their words.
	cmd := exec.CommandContext(ctx, exe, append([]string{"runner"}, args...)...)
	cmd.Dir = sv.workdir
	cmd.Env = sessionenv.With(withoutEnv(sv.env, StateEnv), DirEnv+"="+sv.r.In.Dir, DoorEnv+"=1")
	if len(req.Files) > 0 {
		files, _ := json.Marshal(req.Files)
		cmd.Stdin = bytes.NewReader(files)
	}
	var stdout, stderr cappedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = proc.SysProcAttr()
	cmd.Cancel = func() error { return proc.Kill(cmd.Process.Pid) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	a := DoorAnswer{Stdout: stdout.String(), Stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		a.Code = exit.ExitCode()
		if a.Code < 0 || ctx.Err() != nil {
			a.Code, a.Stderr = 2, a.Stderr+fmt.Sprintf("autonomy: stopped after %s\n", doorWait)
		}
	case err != nil:
		a.Code, a.Stderr = 2, a.Stderr+"autonomy: "+err.Error()+"\n"
	}
	return a
}

// withoutEnv is env without the variable key.
func withoutEnv(env []string, key string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
}

// cappedBuffer keeps the first maxDoorFile/16 bytes written to it: both streams, quoted in the
// answer's JSON (at most 6 bytes a byte), stay under maxDoorFile.
type cappedBuffer struct{ bytes.Buffer }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxDoorFile/16 - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// writeInRoot writes data to name in root through a new file renamed over it.
func writeInRoot(root *os.Root, name string, data []byte) error {
	tmp := "." + name + ".tmp"
	_ = root.Remove(tmp) // whatever the shell planted there (a link, a FIFO)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow|oNonBlock, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := firstErr(werr, f.Close(), root.Rename(tmp, name)); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}
