package effect

import "github.com/autonomyhq/autonomy/internal/mergecheck"

// What a proposal may contain is internal/mergecheck's, shared with the local runner's code
// flow: a line of ordinary commits, no workflow, action or installation file, within the
// actor's scope, named without control characters.

// proposedFiles lists the paths the commits from..to change, sorted, or the reason (and the
// commits or paths) the proposal is refused.
func (e *Env) proposedFiles(from, to string) (files []string, reason string, bad []string, err error) {
	return mergecheck.Changes(e.gitBytes, from, to, e.Actor, e.Scope)
}

// pushedFiles adds to files what head changes from the default branch it lands on
// (refs/autonomy/base) and vets the union again.
func (e *Env) pushedFiles(files []string, head string) ([]string, string, []string, error) {
	return mergecheck.Landed(e.gitBytes, files, "refs/autonomy/base", head, e.Actor, e.Scope)
}
