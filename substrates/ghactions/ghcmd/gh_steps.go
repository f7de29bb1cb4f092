package ghcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// ghStepsVerbs are the trusted jobs of a step playbook that asks a person (docs/gh-actions.md):
// ask posts a paused run's elicitation on its work item; resume applies the maintainer's answer
// to the paused run another run left, for this run's agent job to continue.
func ghStepsVerbs() []*cobra.Command {
	var envelope, state, record, answered string
	ask := &cobra.Command{
		Use:   "ask --envelope FILE",
		Short: "Post the elicitation a step playbook run waits at on its work item",
		Long: `Reads the envelope autonomy playbook run printed (its requiresInput), AUTONOMY_ACTOR and
AUTONOMY_SUBJECT (the work item), and posts the ask: the prompt, the commands that answer it and,
in its marker, this run's id, whose paused state the resume downloads. The resume token of the
run is never posted. Exit 1 when there is no work item to post on (the prompt is then in the log).`,
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… GITHUB_RUN_ID=7 AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_ACTOR=triage AUTONOMY_SUBJECT=42 autonomy gh ask --envelope envelope.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			var env stepsrun.Envelope
			data, err := os.ReadFile(envelope)
			if err == nil {
				err = json.Unmarshal(data, &env)
			}
			if err != nil {
				return exitcode.Usagef("reading the envelope %s: %v", envelope, err)
			}
			in := env.RequiresInput
			if env.Status != stepsrun.StatusNeedsInput || in == nil {
				return exitcode.Usagef("the envelope %s waits for no input (status %q)", envelope, env.Status)
			}
			n, err := strconv.Atoi(e.Subject)
			if err != nil || n < 1 {
				if err := untrustedLog(cmd.OutOrStdout(), "The question: "+in.Prompt+"\n"); err != nil {
					return exitcode.Usagef("%v", err)
				}
				return exitcode.Problemf("%s: the playbook waits at step %s for a person, but this run has no work item (subject.ref is %q) to ask on; the question is in the log above, and the paused run stays in this run's artifact",
					e.Actor, in.Step, e.Subject)
			}
			a, err := effect.EngageElicitation(context.Background(), e, e.Actor, n, in.Step, in.Prompt, effect.Elicitation{Kind: in.Kind, Options: in.Options})
			if err != nil {
				return effectError(err)
			}
			if record != "" {
				// The run's record of its own ask, uploaded as its artifact: no other run can
				// write there, so the resume knows which comment is this run's ask.
				if err := writeAskRecord(record, askRecord{Token: a.Token, Item: n, Comment: a.CommentID}); err != nil {
					return exitcode.Usagef("%v", err)
				}
			}
			return nil
		},
	}
	ask.Flags().StringVar(&envelope, "envelope", "", "the envelope of the paused run")
	ask.Flags().StringVar(&record, "record", "", "write the ask's record (token, item, comment id) to this file")
	_ = ask.MarkFlagRequired("envelope")

	resume := &cobra.Command{
		Use:   "resume --state DIR",
		Short: "Apply a maintainer's answer to the paused step playbook run of another run",
		Long: `Reads AUTONOMY_ACTOR, AUTONOMY_RESUME_RUN, AUTONOMY_RESUME_ITEM and AUTONOMY_RESUME_ASK (the
dispatch inputs the control workflow set) and the paused run's state DIR (that run's artifact:
its envelope.json and pause.json, as JSON; its database is not opened).
It resumes only a run of this actor's workflow on the default branch, from an unedited ask of
this actor naming that run, resolved by a maintainer's own unedited command (the answer is taken
from it). It then applies the answer to the paused state, saves the answered run in a new
database in --out for autonomy playbook resume --continue ASK, deletes the run's artifact (the pause is spent: a second
resume finds nothing), records the resume on the item, and sets the step output continue=true
(false when the answer cancels the run). Exit 1 when refused.

In the example, the first … is the job's token, the second the paused run's id and the third the
ask's token (the dispatch inputs autonomy_resume_run and autonomy_resume_ask); autonomy-steps and
autonomy-ask are the artifacts the paused run uploaded, downloaded.`,
		Example: `  GITHUB_REPOSITORY=o/r GH_TOKEN=… GITHUB_RUN_ID=8 AUTONOMY_POLICY=.autonomy/policy.json AUTONOMY_ACTOR=triage AUTONOMY_RESUME_RUN=… AUTONOMY_RESUME_ITEM=42 AUTONOMY_RESUME_ASK=… autonomy gh resume --state autonomy-steps --ask-record autonomy-ask/ask.json --out autonomy-resume`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := effect.FromEnv(os.Getenv, cmd.OutOrStdout())
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			run, askToken := os.Getenv("AUTONOMY_RESUME_RUN"), os.Getenv("AUTONOMY_RESUME_ASK")
			item, err := strconv.Atoi(os.Getenv("AUTONOMY_RESUME_ITEM"))
			if err != nil || item < 1 || run == "" || askToken == "" {
				return exitcode.Usagef("AUTONOMY_RESUME_RUN, AUTONOMY_RESUME_ITEM and AUTONOMY_RESUME_ASK must name the run, its work item and the ask")
			}
			rec, err := readAskRecord(record)
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			if rec.Token != askToken || rec.Item != item {
				return exitcode.Problemf("run %s asked %s on #%d, not %s on #%d: the answer is not to that run's question", run, rec.Token, rec.Item, askToken, item)
			}
			ctx := context.Background()
			a, err := effect.ResumeAsk(ctx, e, item, askToken, run, rec.Comment)
			if err != nil {
				return effectError(err)
			}
			artifact, err := effect.PausedArtifact(ctx, e, run, ghactions.StepsArtifact, a)
			if err != nil {
				return effectError(err)
			}
			cont, err := answerPaused(ctx, state, answered, askToken, a)
			if err != nil {
				return err
			}
			// The pause is spent on GitHub, not only in this job's copy of it: a second resume
			// of the run finds nothing to download.
			if err := effect.SpendArtifact(ctx, e, run, artifact); err != nil {
				return exitcode.Usagef("%v", err)
			}
			if err := effect.MarkResumed(ctx, e, a); err != nil {
				return exitcode.Usagef("recording the resume on #%d: %v", item, err)
			}
			if err := stepOutput("continue", strconv.FormatBool(cont)); err != nil {
				return exitcode.Usagef("%v", err)
			}
			if cont {
				fmt.Fprintf(cmd.OutOrStdout(), "resuming the playbook of %s (run %s) with the %s of the maintainer\n", a.Actor, run, a.Resolved)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "the maintainer's reject cancels the playbook of %s (run %s): no further step runs\n", a.Actor, run)
			}
			return nil
		},
	}
	resume.Flags().StringVar(&state, "state", "", "the directory of the paused run's state (its envelope.json and playbooks.db)")
	resume.Flags().StringVar(&record, "ask-record", "", "the record of its ask the paused run's ask job uploaded")
	resume.Flags().StringVar(&answered, "out", "", "the directory to write the answered run's new database in (for the agent job)")
	_ = resume.MarkFlagRequired("out")
	_ = resume.MarkFlagRequired("state")
	_ = resume.MarkFlagRequired("ask-record")
	return []*cobra.Command{ask, resume}
}

// answerPaused applies the answer of the resolved ask a to the paused run in dir (its
// envelope.json and pause.json, read as JSON: the database the run's model could have written is
// never opened here), and saves the answered run under playproto.ContinueKey(askToken) in a new
// database at out (out/playbooks.db), for the agent job to continue; it reports false when the
// answer cancels the run instead (a reject of an input or a select).
func answerPaused(ctx context.Context, dir, out, askToken string, a *effect.Ask) (bool, error) {
	var env stepsrun.Envelope
	data, err := os.ReadFile(filepath.Join(dir, "envelope.json"))
	if err == nil {
		err = json.Unmarshal(data, &env)
	}
	if err != nil || env.RequiresInput == nil || env.RequiresInput.ResumeToken == "" {
		return false, exitcode.Usagef("the paused run's state in %s has no envelope waiting for input (the artifact expired, or the run did not pause): %v", dir, err)
	}
	var p stepsrun.Pause
	data, err = os.ReadFile(filepath.Join(dir, "pause.json"))
	if err == nil {
		err = json.Unmarshal(data, &p)
	}
	if err != nil || len(p.State) == 0 {
		return false, exitcode.Usagef("the paused run's state in %s has no pause.json: %v", dir, err)
	}
	if p.TokenHash != playproto.HashToken(env.RequiresInput.ResumeToken) {
		return false, &exitcode.Error{Code: exitcode.Problems, Msg: "the paused run's pause is not the one its envelope's token redeems"}
	}
	var ans stepsrun.Answer
	switch {
	case a.Resolved == "reject" && a.Elicit.Kind == "confirm":
		ans.Deny = true
	case a.Resolved == "reject":
		return false, nil
	case a.Resolved == "approve" && a.Elicit.Kind == "confirm":
		ans.Approve = true
	case a.Resolved == "answer":
		ans.Text = a.Answer
	default:
		return false, exitcode.Problemf("the ask was resolved with %s, which does not answer a %s", a.Resolved, a.Elicit.Kind)
	}
	next, err := stepsrun.Apply(p.State, ans)
	if err != nil {
		return false, exitcode.Problemf("the answer does not fit the elicitation: %v", err)
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return false, exitcode.Usagef("%v", err)
	}
	st, err := store.Open(filepath.Join(out, "playbooks.db"))
	if err != nil {
		return false, exitcode.Usagef("%v", err)
	}
	defer st.Close()
	if err := st.SavePause(ctx, playproto.ContinueKey(askToken), p.Session, next); err != nil {
		return false, exitcode.Usagef("%v", err)
	}
	return true, nil
}

// stepOutput sets a step output through GITHUB_OUTPUT (a no-op outside a job).
func stepOutput(name, value string) error {
	path := os.Getenv("GITHUB_OUTPUT")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("GITHUB_OUTPUT: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%s=%s\n", name, value); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// askRecord is what a run's ask job records of the ask it posted.
type askRecord struct {
	Token   string `json:"token"`
	Item    int    `json:"item"`
	Comment int64  `json:"comment"`
}

func writeAskRecord(path string, r askRecord) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, _ := json.Marshal(r)
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readAskRecord(path string) (askRecord, error) {
	var r askRecord
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err != nil {
		return r, fmt.Errorf("reading the record of the paused run's ask %s: %v (the run's artifact expired, or the run posted no ask)", path, err)
	}
	return r, nil
}
