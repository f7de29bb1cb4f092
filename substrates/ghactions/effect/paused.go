package effect

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/tools"
)

// DefaultPausedLabel is the label that pauses one work item when
// policy.box.gh-actions.paused_label does not name another (docs/gh-actions.md).
const DefaultPausedLabel = "autonomy:paused"

// PausedLabel is the label that pauses a work item: policy.box.gh-actions.paused_label, or
// DefaultPausedLabel.
func (p Policy) PausedLabel() string {
	if l := p.Box.GHActions.PausedLabel; l != "" {
		return l
	}
	return DefaultPausedLabel
}

// ItemPaused reports whether work item n (an issue or a pull request) carries the pause label.
// GitHub compares label names ignoring case, and so does this.
func (e *Env) ItemPaused(ctx context.Context, n int) (bool, error) {
	if n < 1 {
		return false, nil
	}
	is, resp, err := e.Client.Issues.Get(ctx, e.Owner, e.Repo, n)
	if resp != nil && resp.StatusCode == 404 {
		return false, nil // no such item carries no label; what acts on it meets the 404 itself
	}
	if err != nil {
		return false, fmt.Errorf("reading the labels of #%d (is it paused?): %w", n, err)
	}
	return hasLabel(is.Labels, e.Policy.PausedLabel()), nil
}

// hasLabel reports whether labels hold name, ignoring case as GitHub does.
func hasLabel(labels []*github.Label, name string) bool {
	for _, l := range labels {
		if strings.EqualFold(l.GetName(), name) {
			return true
		}
	}
	return false
}

// pausedNote is what a trusted job says when it leaves item n alone because it is paused.
func (e *Env) pausedNote(n int) string {
	return fmt.Sprintf("#%d is paused (it carries the label %q): nothing is done on it; remove the label to resume", n, e.Policy.PausedLabel())
}

// refusePaused refuses to act on work item n when it is paused: the refusal is said in the job's
// log, never on the item. nil when n is no item (0) or is not paused.
func (e *Env) refusePaused(ctx context.Context, n int) error {
	paused, err := e.ItemPaused(ctx, n)
	if err != nil {
		return err
	}
	if paused {
		return &Refused{e.pausedNote(n)}
	}
	return nil
}

// SubjectPaused reports whether the job's subject (AUTONOMY_SUBJECT, a work item number) is
// paused, and says so on Out when it is. A subject that is not a number is no item: not paused.
func (e *Env) SubjectPaused(ctx context.Context) (bool, error) {
	n, err := strconv.Atoi(strings.TrimSpace(e.Subject))
	if err != nil || n < 1 {
		return false, nil
	}
	paused, err := e.ItemPaused(ctx, n)
	if paused {
		fmt.Fprintln(e.Out, e.pausedNote(n))
	}
	return paused, err
}

// targetItem is the work item an effect acts on (0 for none, or a number the effect's own check
// refuses): a comment's, a state change's, an ask's item, a launch's subject.
func targetItem(in tools.Input) int {
	var ref string
	switch v := in.(type) {
	case *tools.CommentInput:
		ref = v.Item
	case *tools.StateChange:
		ref = v.Item
	case *tools.Ask:
		ref = v.Item
	case *tools.LaunchInput:
		ref = v.Subject
	}
	n, err := strconv.Atoi(strings.TrimPrefix(ref, "#"))
	if err != nil || n < 1 {
		return 0
	}
	return n
}
