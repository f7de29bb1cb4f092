package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/overlay"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// evolveExit maps an evolve step's error to the command's: a refusal exits 1 with its reason
// (its diagnostics first), anything else is an I/O failure (exit 2).
func evolveExit(err error) error {
	var r *playbook.Refusal
	switch {
	case err == nil:
		return nil
	case errors.As(err, &r):
		return &exitError{Code: exitProblems, Msg: r.Error()}
	case errors.Is(err, playbook.ErrBusy):
		return &exitError{Code: exitProblems, Msg: err.Error()}
	}
	return usageError("%v", err)
}

// nowFlag is the time --now gives (RFC 3339), or now when it is empty.
func nowFlag(at string) (time.Time, error) {
	if at == "" {
		return time.Now(), nil
	}
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return t, usageError("--now %q: %v (write it as 2026-07-01T12:00:00Z)", at, err)
	}
	return t, nil
}

// newEvolver loads the profile and what evolving its overlays needs, as of --now.
func newEvolver(cmd *cobra.Command, profile, at string) (*playbook.Evolver, error) {
	now, err := nowFlag(at)
	if err != nil {
		return nil, err
	}
	r, diags, err := checkProfile(profile)
	if err != nil {
		return nil, usageError("%v", err)
	}
	if diags.HasErrors() {
		return nil, &exitError{Code: exitProblems, Msg: diags.String() + "fix the profile first"}
	}
	e, err := playbook.NewEvolver(r.Profile, now, cmd.OutOrStdout())
	return e, evolveExit(err)
}

func newPlaybookReflect() *cobra.Command {
	var delta, session, dir, at string
	cmd := &cobra.Command{
		Use:   "reflect PROFILE (--delta FILE | --session ID [--dir INSTALL])",
		Short: "Curate a proposed delta into a new shadow overlay of the profile",
		Long: `reflect takes a delta proposed by a reflection (AIP-12's evolve contract) and curates it into a
new overlay of the profile's overlay package, at status shadow: computed, never woven, until
promote makes it active. The delta is a PLAYBOOK.md overlay: a file (--delta FILE), or the
"overlay" field of the result of a session that ended done in the installation --dir (--session
ID; its result is .autonomy/state/results/ID.json). Its updated_at is set to now and its
provenance added to its evidence (kind: reflection, ref: FILE; or kind: run, ref: ID). It goes in
the package at KIND/NAME/SLUG.md after its first target, _index.md is regenerated and the step is
appended to _log.md, with any unexpected match (an actor only a glob target matches, a target that
matches no actor).

Refused, writing nothing: a delta that does not validate (each problem at FILE:LINE:COL), that is
not at status: shadow, that reuses a slug of the package, or that touches a locked persona trait
(policy.box.persona.locked) for any actor it matches; a package with errors; another reflect,
trial, promote or archive writing the same package at the same time.

Exit codes: 0 written, 1 refused (the reason printed), 2 usage or I/O error.`,
		Example: `  autonomy playbook reflect profiles/librarian --delta docs/examples/overlays/cite-page-dates.md`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (delta == "") == (session == "") {
				return usageError("give the delta: --delta FILE, or --session ID (a session whose result holds it)")
			}
			e, err := newEvolver(cmd, args[0], at)
			if err != nil {
				return err
			}
			file, data, prov, err := readDelta(cmd.Context(), delta, session, dir)
			if err != nil {
				return err
			}
			rel, slug, err := e.Reflect(file, data, prov)
			if err != nil {
				return evolveExit(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: a new overlay at status shadow; once sessions woven with it measurably improve, autonomy playbook promote %s %s\n", rel, args[0], slug)
			return nil
		},
	}
	cmd.Flags().StringVar(&delta, "delta", "", "the delta: a PLAYBOOK.md overlay file")
	cmd.Flags().StringVar(&session, "session", "", "the session whose result's \"overlay\" field is the delta")
	cmd.Flags().StringVar(&dir, "dir", ".", "the installation of --session (holding .autonomy/)")
	cmd.Flags().StringVar(&at, "now", "", "the step's time (RFC 3339): updated_at and the log; default now")
	return cmd
}

// readDelta reads the delta a file or a session's result holds, and its provenance.
func readDelta(ctx context.Context, file, session, dir string) (string, []byte, playbook.Provenance, error) {
	if file != "" {
		data, err := playbook.ReadRegular(file, overlay.MaxSize+1)
		if err != nil {
			return "", nil, playbook.Provenance{}, usageError("--delta %s: %s", file, playbook.Reason(err))
		}
		return file, data, playbook.Provenance{Kind: "reflection", Ref: filepath.ToSlash(file), Note: "proposed in a file"}, nil
	}
	st, db, results, err := openRunnerStore(dir)
	if err != nil {
		return "", nil, playbook.Provenance{}, err
	}
	defer st.Close()
	var s store.Session
	var ok bool
	if err := st.Tx(ctx, func(tx *store.Tx) (err error) { s, ok, err = tx.Get(session); return err }); err != nil {
		return "", nil, playbook.Provenance{}, usageError("%v", err)
	}
	if !ok {
		return "", nil, playbook.Provenance{}, &exitError{Code: exitProblems, Msg: fmt.Sprintf("%s holds no session %q", db, session)}
	}
	if s.Status != ir.Done {
		return "", nil, playbook.Provenance{}, &exitError{Code: exitProblems, Msg: fmt.Sprintf("session %s is %s: only a session that ended done (its result verified) proposes a delta", session, s.Status)}
	}
	resFile := filepath.Join(results, s.ID+".json")
	raw, err := playbook.ReadRegular(resFile, 4<<20)
	if err != nil {
		return "", nil, playbook.Provenance{}, &exitError{Code: exitProblems, Msg: fmt.Sprintf("session %s left no result (%s: %s)", session, resFile, playbook.Reason(err))}
	}
	var res struct {
		Overlay *string `json:"overlay"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Overlay == nil {
		return "", nil, playbook.Provenance{}, &exitError{Code: exitProblems, Msg: fmt.Sprintf("%s has no \"overlay\" string: a reflecting session ends with a result whose overlay field holds its delta, the PLAYBOOK.md text", resFile)}
	}
	return resFile + "#overlay", []byte(*res.Overlay), playbook.Provenance{Kind: "run", Ref: s.ID, Note: "proposed by session " + s.ID + " of " + s.Actor}, nil
}

// openRunnerStore opens the store in which the runner on this machine records the installation
// dir's sessions (substrates.SessionStore), which must exist; results is the folder of their
// results.
func openRunnerStore(dir string) (st *store.Store, db, results string, err error) {
	sub, ok := registry.Lookup(registry.OnThisMachine)
	ss, ok2 := sub.(substrates.SessionStore)
	if !ok || !ok2 {
		return nil, "", "", usageError("the runner on this machine (%s) records no sessions autonomy can read", registry.OnThisMachine)
	}
	db, results = ss.SessionStore(dir)
	if _, err := os.Stat(db); err != nil {
		return nil, db, results, &exitError{Code: exitProblems, Msg: fmt.Sprintf("%s: no recorded session: %s: %s (is --dir the installation the sessions ran in?)", dir, db, playbook.Reason(err))}
	}
	if st, err = store.Open(db); err != nil {
		return nil, db, results, usageError("%v", err)
	}
	return st, db, results, nil
}

func newPlaybookPromote() *cobra.Command {
	var dirs []string
	var at string
	cmd := &cobra.Command{
		Use:   "promote PROFILE SLUG [--dir INSTALL]...",
		Short: "Make a shadow overlay active, only on a measured improvement",
		Long: `promote makes the shadow overlay SLUG of the profile's overlay package active (its updated_at set
to now), archives the overlays it supersedes, regenerates _index.md and appends the promotion,
with its measurement, to _log.md. It does so only when:

  - the overlay is at status shadow, and passes the persona lock (checked again) for every actor
    it matches;
  - the profile declares an evaluation (policy.box.evolve.evaluation) and it shows an
    improvement over the sessions recorded in the installation --dir: the ended sessions of the
    actors the overlay matches that were woven with it (candidate) and without it (baseline),
    each valued by its result (metric score: the mean of a numeric field; metric rate: the share
    whose field equals a value), at least minSessions per arm, the candidate's mean above the
    baseline's by at least minImprovement. The measurement, its inputs and threshold are printed
    whatever the outcome;
  - when the profile enables the LLM judge (policy.box.evolve.judge), the judge, the preset's
    pinned CLI against a model proxy holding the credential, answers PASS.

Exit codes: 0 promoted, 1 refused (the reason printed), 2 usage or I/O error.`,
		Example: `  autonomy playbook promote profiles/librarian prefer-page-supersession-over-deletion --dir .`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := newEvolver(cmd, args[0], at)
			if err != nil {
				return err
			}
			if e.Config.Judge.Enabled {
				judge, err := playbook.AgentJudge(e.Config.Judge, os.Environ(), cmd.ErrOrStderr())
				if err != nil {
					return &exitError{Code: exitProblems, Msg: "not promoted: " + err.Error()}
				}
				e.Judge = judge
			}
			measure := func(o *overlay.Overlay, actors []string) (*playbook.Measurement, error) {
				var srcs []playbook.Sessions
				defer func() {
					for _, s := range srcs {
						s.Store.Close()
					}
				}()
				for _, dir := range dirs {
					st, db, results, err := openRunnerStore(dir)
					if err != nil {
						return nil, err
					}
					srcs = append(srcs, playbook.Sessions{Store: st, Path: db, Results: results})
				}
				return playbook.Measure(cmd.Context(), e.Config.Evaluation, srcs, o, actors)
			}
			if err := e.Promote(cmd.Context(), args[1], measure); err != nil {
				var x *exitError
				if errors.As(err, &x) {
					return err
				}
				return evolveExit(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s is active: compile the profile again to install it\n", args[1])
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&dirs, "dir", []string{"."}, "an installation whose recorded sessions are measured (holding .autonomy/); repeat it to pool several (a trial installation and the production one)")
	cmd.Flags().StringVar(&at, "now", "", "the step's time (RFC 3339): updated_at and the log; default now")
	return cmd
}

func newPlaybookTrial() *cobra.Command {
	var dir, at string
	cmd := &cobra.Command{
		Use:   "trial SLUG [--dir INSTALL]",
		Short: "Weave a shadow overlay in one installation only, to measure it",
		Long: `trial makes the shadow overlay SLUG active in the installation --dir only: its installed copy
of the overlay package (under .autonomy/), with updated_at set to now, its _index.md regenerated
and the trial appended to its _log.md. That installation's sessions are then woven with the
overlay: the candidate arm promote measures (promote PROFILE SLUG --dir PRODUCTION --dir TRIAL).
The profile is not touched and the overlay stays shadow everywhere else; compile refuses to
overwrite the trial's files (changed since it generated them) until given --force, which ends
the trial. Use a trial installation of its own, compiled from
the profile, not the production one. The persona lock still holds: a session's weave skips an
overlay that touches a locked trait, trial or not.

Exit codes: 0 on trial, 1 refused (no installed package, no such overlay, not shadow, another
step writing the package), 2 usage or I/O error.`,
		Example: `  autonomy playbook trial prefer-page-supersession-over-deletion --dir .`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			now, err := nowFlag(at)
			if err != nil {
				return err
			}
			if err := playbook.Trial(dir, ".autonomy", args[0], now, cmd.OutOrStdout()); err != nil {
				return evolveExit(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s is woven in %s's sessions from now on; measure it with autonomy playbook promote PROFILE %s --dir PRODUCTION --dir %s\n", args[0], dir, args[0], dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "the trial installation (holding .autonomy/)")
	cmd.Flags().StringVar(&at, "now", "", "the trial's start (RFC 3339): updated_at, for a ttl; default now")
	return cmd
}

func newPlaybookArchive() *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "archive PROFILE [SLUG...]",
		Short: "Archive superseded and expired overlays, or the ones named",
		Long: `archive sets status: archived on overlays of the profile's overlay package: with no SLUG, every
overlay that is superseded (named in the supersedes of an active, unexpired overlay) or expired
(an active overlay whose ttl, counted from its updated_at, has run out by --now); with SLUGs, those.
Archived overlays stay on disk for audit and are never woven. Each archival is appended to
_log.md with its reason, and _index.md is regenerated. Nothing to archive writes nothing.

Exit codes: 0 archived or nothing to archive, 1 refused (a SLUG the package lacks, a package with
errors, another step writing it), 2 usage or I/O error.`,
		Example: `  autonomy playbook archive profiles/librarian
  autonomy playbook archive profiles/librarian --now 2027-01-01T00:00:00Z`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := newEvolver(cmd, args[0], at)
			if err != nil {
				return err
			}
			n, err := e.Archive(args[1:])
			if err != nil {
				return evolveExit(err)
			}
			if n > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s archived: compile the profile again to install the change\n", count(n, "overlay"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&at, "now", "", "archive as of this time (RFC 3339), for ttls; default now")
	return cmd
}
