package localcmd

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// handoffFlags are launch's flags of a typed ask.
type handoffFlags struct {
	typ, in, question, out string
	options                []string
}

func (h *handoffFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&h.typ, "type", "", "an ask to a person: approve, decide, consult or inform (none: an untyped ask)")
	cmd.Flags().StringVar(&h.in, "in", "", "a typed ask: what you hand over (the situation)")
	cmd.Flags().StringVar(&h.question, "question", "", "a typed ask: the decision asked")
	cmd.Flags().StringArrayVar(&h.options, "option", nil, "a typed ask: a decision option (repeatable; decide needs two or more)")
	cmd.Flags().StringVar(&h.out, "out", "", "a typed ask: what the person is to hand back")
}

// spec is the typed ask the flags give (nil without --type; the handoff flags need it).
func (h *handoffFlags) spec(cmd *cobra.Command) (*handoff.Spec, error) {
	if h.typ == "" {
		for _, name := range []string{"in", "question", "option", "out"} {
			if cmd.Flags().Changed(name) {
				return nil, exitcode.Usagef("--%s types an ask: give --type approve, decide, consult or inform", name)
			}
		}
		return nil, nil
	}
	s := &handoff.Spec{Type: h.typ, In: h.in, Out: h.out}
	if h.question != "" || len(h.options) > 0 {
		s.Decision = &handoff.Decision{Question: h.question, Options: h.options}
	}
	if err := s.Validate(); err != nil {
		return nil, exitcode.Usagef("the ask's handoff: %v", err)
	}
	return s, nil
}

// confirmAsk records the receipt of a typed ask.
func confirmAsk(cmd *cobra.Command, r *local.Runner, id string, p ir.Patch, status string) error {
	if p.Token == "" || status != "" || p.Choice != "" || p.Answer != "" {
		return exitcode.Usagef("confirm a typed ask with --confirm --token T alone (no --status, --choice or --reply)")
	}
	rec, err := r.Confirm(cmd.Context(), id, p.Token)
	if err != nil {
		return runnerError(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s confirmed by %s\n", id, rec.ConfirmedBy)
	return nil
}

// printHandoff prints a typed ask's handoff under the session.
func printHandoff(w io.Writer, rec *handoff.Record) {
	if rec == nil {
		return
	}
	line := func(k, val string) {
		if val != "" {
			fmt.Fprintf(w, "%-10s %s\n", k+":", cliout.TerminalSafe(val))
		}
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return " at " + t.UTC().Format(time.RFC3339)
	}
	line("type", rec.Type)
	line("in", rec.In)
	if d := rec.Decision; d != nil {
		line("question", d.Question)
	}
	for _, o := range rec.Options() {
		line("option", o)
	}
	line("out", rec.Out)
	line("choice", rec.Choice)
	line("reply", rec.Answer)
	if rec.By != "" {
		line("decided", rec.By+at(rec.At))
	}
	if rec.ConfirmedBy != "" {
		line("confirmed", rec.ConfirmedBy+at(rec.ConfirmedAt))
	} else {
		line("confirmed", "not yet (the receiver confirms with update --confirm --token T)")
	}
}

func humansFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "humans", "", "register a human simulator's fixtures file (YAML) for this installation's asks; off clears it")
}

// setHumans registers (or, with off, clears) the human simulator's fixtures.
func setHumans(cmd *cobra.Command, r *local.Runner, path string) error {
	switch path {
	case "":
		return nil
	case "off":
		if err := r.SetHumans(cmd.Context(), nil); err != nil {
			return runnerError(err)
		}
		return nil
	}
	fx, err := local.ParseFixtures(path)
	if err != nil {
		return exitcode.Usagef("--humans: %v", err)
	}
	if err := r.SetHumans(cmd.Context(), fx); err != nil {
		return runnerError(err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "autonomy: the human simulator of %s answers asks (%s)\n", path, cliout.Count(len(fx.People), "simulated person"))
	return nil
}
