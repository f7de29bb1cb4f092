package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// The runner's store of GitHub's objects (codeflow_ghstore.go) stays bounded: a proposal keeps
// its refs there (headRef, mergedRef) while it is open, and they go once it ends (merged or
// refused: every end of a proposal is one of the two), so what only an ended proposal reached
// is garbage; that garbage is collected at a bounded cadence, as git gc --auto collects it:
// after a proposal ended, once the store holds storeLimits' worth of loose objects or packs.
// Every step of the code flow that reads or fetches into the store holds it shared (openStore)
// until the step ends; the collection holds it exclusively, trying once: it never waits for a
// step, and no step reads an object while it is pruned. One it could not take is left pending
// (collectKey), and the next tick tries again; a tick with nothing pending runs no git.

// mergedRef is the runner's ref in its store of the commit the proposal's merge makes
// (mergeCommit): the maintainer's ask names it (personApproves), so it is kept while the
// proposal is open.
func mergedRef(seq int64) string { return fmt.Sprintf("refs/autonomy/merged/%d", seq) }

// collectKey is the store's meta key saying a collection of the runner's store is due.
const collectKey = "github-store-collect"

// storeGCTimeout bounds a collection of the store: a step killed on it leaves the store whole
// (git repack writes its new pack before it deletes the old ones), and the next one resumes.
const storeGCTimeout = 2 * time.Minute

// storeLimits is when a collection repacks and prunes the store: once it holds Loose loose
// objects or Packs packs, or more. Zero fields are the defaults (defaultLimits).
type storeLimits struct{ Loose, Packs int }

// defaultLimits are git gc --auto's kind of thresholds, for a store only the runner writes.
var defaultLimits = storeLimits{Loose: 1000, Packs: 8}

// openStore is the runner's store of GitHub's objects (ghStore), held shared by this step until
// advance ends (finish): a collection prunes nothing meanwhile. A collection under way is
// waited for within mergeWait, by tick not at all (f.once).
func (f *flow) openStore(ctx context.Context) (string, error) {
	dir := f.r.In.Path(ghStorePath)
	if err := ghStore(dir); err != nil {
		return "", err
	}
	if f.unstore != nil {
		return dir, nil
	}
	wait := mergeWait
	if f.once {
		wait = 0
	}
	free, held, err := flockWithin(ctx, dir, false, wait)
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot lock %s: %v", dir, err)
	case !held:
		return "", fmt.Errorf("another process is collecting the runner's store of GitHub's objects %s (waited %s): the next tick retries", dir, wait)
	}
	f.unstore = free
	return dir, nil
}

// finish ends the step: its hold on the store is released, and, when the proposal ended, the
// store is collected.
func (f *flow) finish(ctx context.Context) {
	if f.unstore != nil {
		f.unstore()
		f.unstore = nil
	}
	if f.ended && f.r.onGitHub() {
		f.r.collectStore(ctx)
	}
}

// collectPending collects the runner's store when a collection is pending (collectKey): one
// that found the store held. Nothing pending, it runs no git.
func (r *Runner) collectPending(ctx context.Context) {
	if !r.onGitHub() {
		return
	}
	var v string
	_ = r.Store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		v, _, err = tx.Meta(collectKey)
		return err
	})
	if v != "" {
		r.collectStore(ctx)
	}
}

// setCollect records whether a collection is pending.
func (r *Runner) setCollect(ctx context.Context, pending bool) {
	v := ""
	if pending {
		v = "pending"
	}
	_ = r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(collectKey, v) })
}

// collectStore deletes the store's refs of ended proposals and, when they leave enough behind
// (storeLimits), repacks the store and prunes what no ref reaches. The store held by a step
// (openStore), it is left pending for the next tick. A store that is absent, or no directory
// (ghStore refuses it), is not touched.
func (r *Runner) collectStore(ctx context.Context) {
	dir := r.In.Path(ghStorePath)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return
	}
	free, held, err := tryLock(dir, true)
	if err != nil || !held {
		r.setCollect(ctx, true)
		return
	}
	defer free()
	r.setCollect(ctx, false) // a step ending from now on asks again
	ctx, cancel := context.WithTimeout(ctx, storeGCTimeout)
	defer cancel()
	if r.dropEnded(ctx, dir) > 0 && r.gcLimits.due(dir) {
		_, _ = gitws.Git(ctx, dir, "repack", "-a", "-d", "-q")
		_, _ = gitws.Git(ctx, dir, "prune", "--expire=now")
	}
}

// dropEnded deletes the store's refs of proposals that ended, and says how many it deleted. A
// proposal still open, or one the runner's database does not name, keeps its refs.
func (r *Runner) dropEnded(ctx context.Context, dir string) int {
	out, err := gitws.Git(ctx, dir, "for-each-ref", "--format=%(refname)", "refs/autonomy/proposal/", "refs/autonomy/merged/")
	if err != nil || out == "" {
		return 0
	}
	n := 0
	for _, ref := range strings.Split(out, "\n") {
		seq, err := strconv.ParseInt(ref[strings.LastIndexByte(ref, '/')+1:], 10, 64)
		if err != nil {
			continue
		}
		p, ok, err := r.Store.Proposal(ctx, seq)
		if err != nil || !ok || (p.State != store.ProposalMerged && p.State != store.ProposalRefused) {
			continue
		}
		if _, err := gitws.Git(ctx, dir, "update-ref", "-d", ref); err == nil {
			n++
		}
	}
	return n
}

// due says whether the store at dir holds enough to collect: lim's loose objects or packs (the
// defaults for zero fields), counted in its object directory without running git.
func (lim storeLimits) due(dir string) bool {
	if lim.Loose <= 0 {
		lim.Loose = defaultLimits.Loose
	}
	if lim.Packs <= 0 {
		lim.Packs = defaultLimits.Packs
	}
	objects := filepath.Join(dir, "objects")
	packs, _ := filepath.Glob(filepath.Join(objects, "pack", "*.pack"))
	if len(packs) >= lim.Packs {
		return true
	}
	loose := 0
	entries, _ := os.ReadDir(objects)
	for _, e := range entries {
		if name := e.Name(); e.IsDir() && len(name) == 2 && strings.Trim(name, "0123456789abcdef") == "" {
			in, _ := os.ReadDir(filepath.Join(objects, name))
			if loose += len(in); loose >= lim.Loose {
				return true
			}
		}
	}
	return false
}

// flockWithin takes the flock of path (exclusive, else shared), waiting for another holder
// within wait (0: one try); held is false when it did not take it within wait.
func flockWithin(ctx context.Context, path string, exclusive bool, wait time.Duration) (free func(), held bool, err error) {
	deadline := time.Now().Add(wait)
	for {
		free, held, err := tryLock(path, exclusive)
		if err != nil || held {
			return free, held, err
		}
		if !time.Now().Before(deadline) {
			return nil, false, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(rootPoll):
		}
	}
}
