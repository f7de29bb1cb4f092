package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// On codeHost github, what the human gate and the checks read before auto-merge is armed comes
// from an object store the runner owns, never the repository's: a session's sandbox writes the
// repository's git directory, and git does not re-hash an object it reads, so a session could
// overwrite a loose object after its head was pushed (the blob of a workflow, say) and the
// maintainer's diff and the checks would read other content than GitHub merges. The runner's
// store is filled only by fetches from GitHub, whose index-pack re-hashes every object it
// receives: what is there is what GitHub has.

// ghStorePath is the runner's object store of GitHub's objects, relative to the installation.
const ghStorePath = StateDir + "/git/github.git"

// ghStoreConfig is the store's configuration: the runner's alone, nothing collecting garbage in
// it while a gate reads it.
const ghStoreConfig = `[core]
	repositoryformatversion = 0
	bare = true
[gc]
	auto = 0
[maintenance]
	auto = false
`

// ghStore is the runner's bare repository at dir, created (0700) when absent; an entry there
// the runner did not make as a directory (a symbolic link, a file) is refused.
func ghStore(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link, not the runner's store of GitHub's objects: remove it (the runner makes it again)", dir)
	case err == nil && !fi.IsDir():
		return fmt.Errorf("%s is not a directory, not the runner's store of GitHub's objects: remove it (the runner makes it again)", dir)
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return err
	}
	// Made whole beside it, then renamed into place: a runner stopped halfway leaves no half
	// store (a transfer- directory, which the next transfer sweeps once stale).
	tmp, err := os.MkdirTemp(parent, "transfer-store-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, d := range []string{"objects", "refs"} {
		if err = os.Mkdir(filepath.Join(tmp, d), 0o700); err != nil {
			return err
		}
	}
	if err = os.WriteFile(filepath.Join(tmp, "HEAD"), []byte("ref: refs/heads/main\n"), 0o600); err != nil {
		return err
	}
	if err = os.WriteFile(filepath.Join(tmp, "config"), []byte(ghStoreConfig), 0o600); err != nil {
		return err
	}
	if err = os.Rename(tmp, dir); err != nil {
		if fi, lerr := os.Lstat(dir); lerr == nil && fi.IsDir() {
			return nil // another process made it meanwhile
		}
		return err
	}
	return nil
}

// headRef is the runner's ref in its store that the proposal's head, fetched from GitHub, is
// kept at.
func headRef(seq int64) string { return fmt.Sprintf("refs/autonomy/proposal/%d", seq) }

// readFromGitHub points the gate's reads (f.dir) at the runner's store, into which it fetches
// the proposal's head as GitHub merges it: its pull request's head, the read-only ref
// refs/pull/<number>/head, which only GitHub moves (GitHub's target is fetched there by
// targetBase). What is fetched must be the head GitHub's API reports for the pull request, and
// the proposal's. False when it left the proposal waiting (tick retries) or settled it (its
// pull request merged or closed: mergeOnGitHub), saying why: the gate never reads the
// repository's objects instead.
func (f *flow) readFromGitHub(ctx context.Context) bool {
	gh, err := f.github(ctx)
	if err != nil {
		f.wait(ctx, "approved; not checked on GitHub: "+err.Error())
		return false
	}
	head, pr, err := f.headOnGitHub(ctx)
	switch {
	case err != nil:
		f.wait(ctx, "approved; not checked: its pull request cannot be read (tick retries): "+err.Error())
		return false
	case pr.GetState() != "open":
		f.mergeOnGitHub(ctx) // merged (or closed) on GitHub: settled, nothing is armed
		return false
	}
	dir, err := f.openStore(ctx)
	if err != nil {
		f.wait(ctx, "approved; not checked: the runner's store of GitHub's objects cannot be opened (tick retries): "+err.Error())
		return false
	}
	ref := fmt.Sprintf("refs/pull/%d/head", pr.GetNumber())
	sha, out, err := gitws.Fetch(ctx, dir, gh.git(), ref, headRef(f.p.Seq), headRef(f.p.Seq), baseRef(f.p.Target))
	switch {
	case err != nil:
		f.wait(ctx, fmt.Sprintf("approved; not checked: the head cannot be fetched from GitHub's %s (tick retries): %v: %s", ref, err, gh.redact(out)))
		return false
	case !strings.EqualFold(sha, head):
		f.wait(ctx, fmt.Sprintf("approved; not checked: GitHub's %s is at %s, not at the head its API reports for pull request #%d, %s (tick retries)", ref, short(sha), pr.GetNumber(), short(head)))
		return false
	case sha != f.p.Head:
		f.wait(ctx, fmt.Sprintf("approved; not checked: pull request #%d's head on GitHub is %s, not the proposal's head %s (tick retries)", pr.GetNumber(), short(sha), short(f.p.Head)))
		return false
	}
	f.gdir, f.alt = dir, ""
	return true
}

// dir is where the gate's git reads run: the runner's store of GitHub's objects once
// readFromGitHub pointed them there, else the repository.
func (f *flow) dir() string {
	if f.gdir != "" {
		return f.gdir
	}
	return f.repo
}
