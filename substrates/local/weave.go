package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// weave applies the installation's overlay package to an agent session's skill as the session
// starts (AIP-12's apply contract, through the PlaybookHost): it writes the woven skill under the state
// folder and returns its path for the agent's stdin. What was woven, in order, is recorded with
// the session as a "woven" event; every matching overlay left out is an "overlay-skipped" event
// holding its audit line, also written to the session's log. Without an overlay package the skill
// is returned unchanged, and so it is by a runner without a PlaybookHost (which refuses a skill
// session of an installation that has one, ErrNoPlaybookHost).
func (r *Runner) weave(ctx context.Context, s store.Session, cfg *ActorConfig, skill string, log io.Writer) (string, error) {
	text, err := os.ReadFile(skill)
	if err != nil {
		return "", fmt.Errorf("cannot read its behavior: %v", err)
	}
	now := r.opts.Now()
	// skill/NAME targets the behavior's declared name (ir.BehaviorName), not the folder it
	// sits in: the two differ when a SKILL.md's frontmatter names another skill.
	name, declared := ir.BehaviorName(cfg.Behavior, text)
	host := r.opts.Playbooks
	if host == nil {
		if _, err := os.Lstat(r.In.Path(dataDir + "/" + resolved.WeaveFile)); errors.Is(err, fs.ErrNotExist) {
			return skill, nil
		}
		return "", ErrNoPlaybookHost
	}
	actor := playproto.Actor{Name: s.Actor, Behavior: name, Substrate: Name}
	res, ok, err := host.Weave(r.In.Dir, dataDir, actor, string(text), now)
	if err != nil || !ok {
		return skill, err
	}
	out := r.In.Path(StateDir + "/woven/" + s.ID + ".md")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	if err := writeNew(out, []byte(res.Skill), 0o644); err != nil {
		return "", err
	}
	event := func(kind, msg string) {
		_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: kind, Message: msg})
	}
	event("woven", WovenSummary(res.Woven)+"; "+matchedAs(cfg.Behavior, name, declared))
	for _, sk := range res.Skipped {
		line := sk.Audit(now, s.Actor)
		fmt.Fprintln(log, "autonomy: "+line)
		event("overlay-skipped", line)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(log, "autonomy: warning: "+w)
		event("overlay-cap", w)
	}
	return out, nil
}

// WovenSummary says what was woven, in order: "2 overlays woven: a (overlay, priority 70), b
// (block-replacement of tone, priority 50)", or "no overlay woven".
func WovenSummary(ws []playproto.Woven) string {
	if len(ws) == 0 {
		return "no overlay woven"
	}
	parts := make([]string, len(ws))
	for i, w := range ws {
		how := w.Kind
		if w.Block != "" {
			how += " of " + w.Block
		}
		parts[i] = fmt.Sprintf("%s (%s, priority %d)", w.Slug, how, w.Priority)
	}
	noun := "overlays"
	if len(ws) == 1 {
		noun = "overlay"
	}
	return fmt.Sprintf("%d %s woven: %s", len(ws), noun, strings.Join(parts, ", "))
}

// matchedAs says which name of the behavior skill/ targets were matched against: "matched as
// skill/review (the name its frontmatter declares; its folder is reviewer)", or "(its folder's
// name)", "(its file's name)".
func matchedAs(file, name string, declared bool) string {
	how := "its file's name"
	if path.Base(file) == ir.SkillFile {
		how = "its folder's name"
	}
	if declared {
		how = "the name its frontmatter declares"
		if folder := path.Base(path.Dir(file)); path.Base(file) == ir.SkillFile && folder != name {
			how += "; its folder is " + folder
		}
	}
	return fmt.Sprintf("matched as skill/%s (%s)", name, how)
}
