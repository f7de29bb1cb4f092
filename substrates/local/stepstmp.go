package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
)

// A step playbook session's run gets a TMPDIR of its own, under the runner's TMPDIR (else the
// system's temporary directory), that its supervisor removes when the session ends: a run killed
// mid-step (SIGKILL: its deferred clean-up never runs) leaves its step's folder (autonomy-step-*)
// in it. A supervisor that dies removes nothing, so it records where the folder is, in the
// state folder (results/<id>.tmpdir), for whoever finishes for it: the supervisor that continues
// the session (resume.go) before it makes its own, and the process that records the session's
// end or finishes its stop (reclaim), which may run with another TMPDIR.

// stepsTempPrefix is the name prefix of the TMPDIRs of session id's runs: autonomy-steps-, then
// a digest of the installation's directory and the session id (ids repeat across
// installations), then a dash; MkdirTemp adds a random suffix. Only a folder of that name is
// ever removed as one, whatever the record names.
func (in *Install) stepsTempPrefix(id string) string {
	sum := sha256.Sum256([]byte(in.Dir + "\x00" + id))
	return "autonomy-steps-" + hex.EncodeToString(sum[:8]) + "-"
}

// stepsTempRecord is where the supervisor of session id records its run's TMPDIR.
func (in *Install) stepsTempRecord(id string) string {
	return in.Path(StateDir + "/results/" + id + ".tmpdir")
}

// stepsTemp returns env with the TMPDIR of a run of session id, made under the TMPDIR of the
// runner's environment inherited (never one a param of the session names) and recorded, and what
// removes it with its record. What a dead supervisor of the session left is removed first.
func (in *Install) stepsTemp(inherited, env []string, id string) ([]string, func(), error) {
	in.removeStepsTemp(id)
	parent := "TMPDIR=" + agent.TempParent(inherited)
	out, remove, err := agent.PrivateTemp(append(env[:len(env):len(env)], parent), "the step playbook's run", in.stepsTempPrefix(id))
	if err != nil {
		return nil, remove, err
	}
	dir := out[len(out)-1][len("TMPDIR="):]
	if err = os.MkdirAll(filepath.Dir(in.stepsTempRecord(id)), 0o700); err == nil {
		err = writeNew(in.stepsTempRecord(id), []byte(dir), 0o600)
	}
	if err != nil {
		remove()
		return nil, func() {}, fmt.Errorf("cannot record the temporary directory of the step playbook's run: %v", err)
	}
	return out, func() { remove(); _ = os.Remove(in.stepsTempRecord(id)) }, nil
}

// removeStepsTemp removes the TMPDIR session id's supervisor recorded, and its record, and
// returns the folder ("" when none was removed). The record is read as a result is (the state
// folder is writable by an agent working in the installation root): it is followed only to an
// absolute path whose name is the session's prefix, and only a folder is removed, never a link.
func (in *Install) removeStepsTemp(id string) string {
	rec := in.stepsTempRecord(id)
	data, err := readResultFile(rec)
	if err != nil {
		return ""
	}
	_ = os.Remove(rec)
	dir := string(data)
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || !strings.HasPrefix(filepath.Base(dir), in.stepsTempPrefix(id)) {
		return ""
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || os.RemoveAll(dir) != nil {
		return ""
	}
	return dir
}

// reclaim does for session s, whose supervisor died, what that supervisor does when a session
// ends: it removes its worktree (reclaimWorktree) and its run's TMPDIR, unless a process started
// in the session still runs. The caller is the one process that recorded the session's end, or
// that finished its stop.
func (r *Runner) reclaim(ctx context.Context, s store.Session) {
	r.reclaimWorktree(ctx, s)
	if len(proc.GroupsWithEnv(SessionEnv+"="+s.ID)) > 0 {
		return
	}
	if dir := r.In.removeStepsTemp(s.ID); dir != "" {
		msg := "its supervisor died; removed the temporary folder of its run, " + dir
		_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "tmpdir", Message: msg})
	}
}
