package ghcmd

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/control"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// ghSessions is what get and list read on gh-actions: the job runner's runs, with a human
// actor's session running while the ask it posted is open (control.Humans), and the open asks
// listed, each only where the caller may see that actor's sessions.
type ghSessions struct {
	j *ghrun.JobRunner
	h *control.Humans // nil: the fleet has no human actor
}

// newGHSessions reads the asks with the job's token and the installation's policy (its task
// states name the input-required label) in dir.
func newGHSessions(j *ghrun.JobRunner, dir string) (*ghSessions, error) {
	var humans []string
	for _, a := range j.Actors {
		if a.Kind == "human" {
			humans = append(humans, a.Name)
		}
	}
	if len(humans) == 0 {
		return &ghSessions{j: j}, nil
	}
	if dir == "" {
		dir = os.Getenv("GITHUB_WORKSPACE")
	}
	getenv := func(k string) string {
		v := os.Getenv(k)
		switch {
		case v != "":
			return v
		case k == "GH_TOKEN":
			return os.Getenv("GITHUB_TOKEN")
		case k == substrates.PolicyEnv:
			if p := filepath.Join(dir, filepath.FromSlash(substrates.PolicyPath)); fileExists(p) {
				return p
			}
		}
		return ""
	}
	env, err := effect.FromEnv(getenv, io.Discard)
	if err != nil {
		return nil, err
	}
	return &ghSessions{j: j, h: &control.Humans{Runner: j, Env: env, Actors: humans}}, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Get is the job runner's Get; an ask with no run ("ask:TOKEN") is seen only by who may list
// its actor's sessions.
func (g *ghSessions) Get(ctx context.Context, id string) (ir.Session, bool, error) {
	if g.h == nil {
		return g.j.Get(ctx, id)
	}
	if strings.HasPrefix(id, "ask:") {
		if err := g.j.Authorize("list", ""); err != nil {
			return ir.Session{}, false, err
		}
	}
	s, ok, err := g.h.Get(ctx, id)
	if err != nil || !ok {
		return s, ok, err
	}
	if !g.j.Lists(s.Agent) {
		return ir.Session{}, false, g.j.Authorize("list", s.Agent)
	}
	return s, true, nil
}

// List is the job runner's sessions in flight and the open asks the caller may see.
func (g *ghSessions) List(ctx context.Context) ([]ir.Session, error) {
	if g.h == nil {
		return g.j.List(ctx)
	}
	ss, err := g.h.List(ctx)
	if err != nil {
		return nil, err
	}
	out := ss[:0]
	for _, s := range ss {
		if g.j.Lists(s.Agent) {
			out = append(out, s)
		}
	}
	return out, nil
}
