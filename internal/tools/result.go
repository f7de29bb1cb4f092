package tools

import (
	"fmt"

	"github.com/autonomyhq/autonomy/ir"
)

// ResultInstructions is what every agent session of an actor with the default result contract
// (ir.DefaultContract) is told after its skill, on every substrate: a session is done only with
// a result that validates, delivered through submit_result (or, for a session without the
// tools, as its final message or in the file AUTONOMY_RESULT names).
func ResultInstructions() string {
	return fmt.Sprintf(`

---

## Your result (%s)

This session is done only when it delivers a result that validates; exiting is not enough, and a session without one ends failed. Before you finish, call the %s tool once, with:

- "status": "done" when the work is complete and you checked it, "failed" when it is not;
- "summary": what happened, in a sentence or two;
- "done": what you did, one short line each (at most %d).

Without a %s tool, make your final answer that JSON object and nothing else, e.g. {"status": "done", "summary": "…", "done": ["…"]}; a program that is not a model writes it to the file the AUTONOMY_RESULT environment variable names.
`, ir.DefaultContract, SubmitResult, MaxItems, SubmitResult)
}
