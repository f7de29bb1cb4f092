package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/substrates"
)

// Observe sets each supported or partial cell of matrix from the battery's results on the
// runners of its substrate: a check that lists the cell's feature (Check.Features) and passed
// observed it (Cell.Observed); one that failed leaves the cell unverified (one the runner answered
// unsupported observed nothing). A cell no check observed keeps its declaration, verified by its
// probe compile only, and says why (Cell.DeclaredOnly).
func Observe(matrix []Cell, targets []Target, results []Result) {
	byName := map[string]Target{}
	for _, t := range targets {
		byName[t.Name] = t
	}
	for i := range matrix {
		c := &matrix[i]
		if c.Level == substrates.Unsupported {
			continue
		}
		var why []string
		for _, r := range results {
			t := byName[r.Target]
			if t.Substrate != c.Substrate || !observes(r.Check, c.Feature) {
				continue
			}
			switch r.Outcome {
			case Pass, Supported:
				c.Observed = append(c.Observed, fmt.Sprintf("%s on %s", r.Check, r.Target))
			case NotProbed:
				why = append(why, notObserved(t, r))
			case Unsupported: // the runner does not take the call: it observed nothing, nor disproved the cell
				why = append(why, fmt.Sprintf("%s on %s found the call unsupported: %s", r.Check, r.Target, r.Reason))
			default:
				if c.Verified {
					c.Verified = false
					c.Problem = fmt.Sprintf("declared %s, but the battery's %s on %s found it %s: %s", c.Level, r.Check, r.Target, r.Outcome, r.Reason)
				}
			}
		}
		if len(c.Observed) > 0 || !c.Verified {
			continue
		}
		if len(why) == 0 {
			why = append(why, "no check of the battery observes it")
		}
		slices.Sort(why)
		c.DeclaredOnly = strings.Join(slices.Compact(why), "; ")
	}
}

// notObserved says why r, not probed, observed nothing: its runner was not run, or the check
// cannot observe it there.
func notObserved(t Target, r Result) string {
	if t.Skip != "" {
		return "its runners were not run: " + t.Skip
	}
	return fmt.Sprintf("%s cannot observe it on %s: %s", r.Check, r.Target, r.Reason)
}

// observes reports whether the check named check observes feature.
func observes(check, feature string) bool {
	i := slices.IndexFunc(Checks, func(c Check) bool { return c.Name == check })
	return i >= 0 && slices.Contains(Checks[i].Features, feature)
}
