package localcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/autonomyhq/autonomy/substrates/local"
)

// weaveView is what was woven into a session's skill, from its events: the summary, in order,
// and the audit line of every matching overlay left out.
type weaveView struct {
	Woven    string   `json:"woven"`
	Skipped  []string `json:"skipped"`
	Warnings []string `json:"warnings,omitempty"`
}

// sessionWeave reads the weaving events of a session; nil when none was recorded (no overlay
// package, or not started yet).
func sessionWeave(ctx context.Context, r *local.Runner, id string) *weaveView {
	events, err := r.Store.Events(ctx, id, 0)
	if err != nil {
		return nil
	}
	var v *weaveView
	for _, e := range events {
		switch e.Kind {
		case "woven":
			v = &weaveView{Woven: e.Message, Skipped: []string{}}
		case "overlay-skipped":
			if v != nil {
				v.Skipped = append(v.Skipped, e.Message)
			}
		case "overlay-cap":
			if v != nil {
				v.Warnings = append(v.Warnings, e.Message)
			}
		}
	}
	return v
}

// printWeave adds the weaving of a session to `runner get`.
func printWeave(w io.Writer, v *weaveView) {
	if v == nil {
		return
	}
	fmt.Fprintf(w, "%-10s %s\n", "overlays:", v.Woven)
	for _, s := range v.Skipped {
		fmt.Fprintf(w, "%-10s %s\n", "skipped:", s)
	}
	for _, s := range v.Warnings {
		fmt.Fprintf(w, "%-10s %s\n", "warning:", s)
	}
}
