package substrates

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/ir"
)

// PrintSessions writes ss as a substrate's `runner list` prints them: with format json, one
// object {"sessions": [...]} (an empty list, never null); else a table of their ids, actors,
// statuses and params, made safe for a terminal.
func PrintSessions(out io.Writer, format string, ss []ir.Session) error {
	if ss == nil {
		ss = []ir.Session{}
	}
	if format == "json" {
		return cliout.WriteJSON(out, struct {
			Sessions []ir.Session `json:"sessions"`
		}{ss})
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACTOR\tSTATUS\tPARAMS")
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.Agent, s.Status, cliout.TerminalSafe(cliout.ParamsLine(s.Params)))
	}
	return tw.Flush()
}

// PrintSession writes s as a substrate's `runner get` prints it without --format json: its id,
// actor, status, ref (when it has one), params and the reason it ended so (when there is one),
// one a line, made safe for a terminal.
func PrintSession(w io.Writer, s ir.Session) {
	fmt.Fprintf(w, "%-10s %s\n", "id:", s.ID)
	fmt.Fprintf(w, "%-10s %s\n", "actor:", s.Agent)
	fmt.Fprintf(w, "%-10s %s\n", "status:", s.Status)
	if s.Ref != "" {
		fmt.Fprintf(w, "%-10s %s\n", "ref:", cliout.TerminalSafe(s.Ref))
	}
	for _, k := range cliout.SortedKeys(s.Params) {
		fmt.Fprintf(w, "param:     %s=%q\n", cliout.TerminalSafe(k), s.Params[k])
	}
	if s.Reason != "" {
		fmt.Fprintf(w, "%-10s %s\n", "reason:", cliout.TerminalSafe(s.Reason)) // it may quote the agent
	}
}
