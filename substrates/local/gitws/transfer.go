package gitws

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The runner's push and fetch carry its token, and a repository's git directory is writable by
// the sandboxed agent, config included: http.proxy, http.<url>.sslVerify, http.<url>.extraHeader,
// url.<base>.insteadOf, remote.origin.url, include.path and the like would send the push, and
// the token, wherever the agent says (and an http.<url>.* key beats a -c override, so no list of
// overrides is complete). So a transfer reads no configuration anyone but the runner wrote: it
// runs in a scratch git directory the runner makes for it (mode 0700, in a folder of the
// runner's, removed after), whose configuration the runner writes, whose objects are the
// repository's object store (GIT_OBJECT_DIRECTORY), with no global or system configuration
// (gitEnv) and HOME and XDG_CONFIG_HOME in the scratch directory; the URL and the refs are the
// runner's own, given on the command line.

// Remote is where the runner pushes to and fetches from: none of it is read from the repository.
type Remote struct {
	// URL is the remote's http(s) URL, as the runner knows the repository.
	URL string
	// Env is added to git's environment: a credential (GIT_CONFIG_COUNT=1,
	// GIT_CONFIG_KEY_0=http.<server>/.extraHeader, …) goes there, never in git's arguments, which
	// every user of the machine can list.
	Env []string
	// Scratch is the runner's folder the scratch git directories are made in (created 0700).
	Scratch string
}

// scratchConfig is the scratch git directory's configuration: its object store is the
// repository's, so nothing may collect garbage there (it would take every object no scratch ref
// reaches), and no alternate's refs are listed by running git in a repository the agent names
// (objects/info/alternates).
const scratchConfig = `[core]
	repositoryformatversion = 0
	bare = true
	alternateRefsCommand = true
[gc]
	auto = 0
[maintenance]
	auto = false
[fetch]
	writeCommitGraph = false
`

// remoteConfig is given to push and fetch besides safeConfig: only http(s) is reached (a
// redirect to another protocol fails), with no credential helper or askpass program.
var remoteConfig = []string{
	"-c", "protocol.allow=never",
	"-c", "protocol.http.allow=always",
	"-c", "protocol.https.allow=always",
	"-c", "credential.helper=",
	"-c", "core.askPass=",
}

// scratch is a transfer's git directory for repo, made in rm.Scratch, and the environment git
// runs in there; remove it with os.RemoveAll.
type scratch struct {
	dir string
	env []string
}

// newScratch makes the scratch git directory of a transfer of repo to or from rm.
func newScratch(ctx context.Context, repo string, rm Remote) (*scratch, error) {
	if !strings.HasPrefix(rm.URL, "https://") && !strings.HasPrefix(rm.URL, "http://") {
		return nil, fmt.Errorf("the remote %q is not an http(s) URL", rm.URL)
	}
	common, err := CommonDir(ctx, repo)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(rm.Scratch, 0o700); err != nil {
		return nil, err
	}
	sweepScratch(rm.Scratch, time.Now().Add(-staleScratch))
	dir, err := os.MkdirTemp(rm.Scratch, "transfer-")
	if err != nil {
		return nil, err
	}
	sc := &scratch{dir: dir}
	for _, d := range []string{"objects", "refs"} {
		if err = os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			break
		}
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o600)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "config"), []byte(scratchConfig), 0o600)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	sc.env = append(gitEnv(), "GIT_DIR="+dir, "GIT_OBJECT_DIRECTORY="+filepath.Join(common, "objects"),
		"HOME="+dir, "XDG_CONFIG_HOME="+dir)
	sc.env = append(sc.env, rm.Env...)
	return sc, nil
}

// staleScratch is the age past which a scratch git directory is taken to be left by a process
// that was killed (a transfer removes its own when it ends).
const staleScratch = 24 * time.Hour

// sweepScratch removes the scratch git directories in parent last changed before cutoff.
func sweepScratch(parent string, cutoff time.Time) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() && strings.HasPrefix(e.Name(), "transfer-") && info.ModTime().Before(cutoff) {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// run runs git verb args… in the scratch directory, as the comment above says.
func (sc *scratch) run(ctx context.Context, verb string, args ...string) ([]byte, error) {
	argv := append(append(append([]string{}, safeConfig...), remoteConfig...), verb)
	cmd := exec.CommandContext(ctx, "git", append(argv, args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir, cmd.Env = sc.dir, sc.env
	return cmd.CombinedOutput()
}

// Push force-pushes commit sha of repo to ref (refs/heads/…) on rm, reading no configuration of
// the repository's (see above). The output is git's.
func Push(ctx context.Context, repo string, rm Remote, sha, ref string) ([]byte, error) {
	sc, err := newScratch(ctx, repo, rm)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(sc.dir)
	return sc.run(ctx, "push", "--quiet", "--no-verify", rm.URL, "+"+sha+":"+ref)
}

// Fetch fetches ref (refs/heads/…, refs/pull/…) from rm into repo's object store, as Push pushes, points
// repo's ref into at it, and returns its commit. The commits of haves (repo's refs, where they
// exist) are offered as held, so that only what they lack is fetched.
func Fetch(ctx context.Context, repo string, rm Remote, ref, into string, haves ...string) (string, []byte, error) {
	sc, err := newScratch(ctx, repo, rm)
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(sc.dir)
	for i, h := range haves {
		if sha, err := Git(ctx, repo, "rev-parse", "--verify", "--quiet", h+"^{commit}"); err == nil {
			_ = os.MkdirAll(filepath.Join(sc.dir, "refs", "haves"), 0o700)
			_ = os.WriteFile(filepath.Join(sc.dir, "refs", "haves", fmt.Sprint(i)), []byte(sha+"\n"), 0o600)
		}
	}
	const fetched = "refs/fetched"
	out, err := sc.run(ctx, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head",
		"--no-auto-gc", "--no-auto-maintenance", "--no-write-commit-graph", rm.URL, "+"+ref+":"+fetched)
	if err != nil {
		return "", out, err
	}
	b, err := os.ReadFile(filepath.Join(sc.dir, fetched))
	sha := string(bytes.TrimSpace(b))
	if err != nil || !isHex(sha) {
		return "", out, fmt.Errorf("the fetch of %s recorded no commit", ref)
	}
	if _, err := Git(ctx, repo, "update-ref", into, sha); err != nil {
		return "", out, err
	}
	return sha, out, nil
}

// isHex says whether s is an object name: 40 or 64 lower-case hex digits.
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}
