package provision

import (
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/maintainers"
)

// NotRead is the From of a step Offline plans: nothing was read from GitHub.
const NotRead = "not read (no token)"

// wantChecks are the status checks the default branch must require.
func wantChecks(p Policy) []string {
	want := []string{StatusContext}
	if p.HumanGate {
		want = append(want, HumanApprovalContext)
	}
	want = append(want, p.RequiredChecks...)
	if len(p.RequiredChecks) == 0 {
		want = append(want, "ci")
	}
	return want
}

// protectionTo is the branch protection a step sets, as it prints.
func protectionTo(contexts []string) string {
	return strings.Join(contexts, ", ") + " required, up to date, admins included, no force pushes"
}

// Offline is the plan of a dry run that cannot read the repository (no token): every step
// Provision takes, with what it makes the setting, from NotRead, action "plan". Provision with a
// token says which of them are already so.
func Offline(p Policy) []Step {
	plan := func(what, to string) Step { return Step{What: what, From: NotRead, To: to, Action: "plan"} }
	steps := []Step{
		plan("repository: allow auto-merge", "true"),
		plan("repository: delete branch on merge", "true"),
		plan("actions: default workflow token permissions", "read"),
		plan("actions: allow GitHub Actions to create and approve pull requests", "true"),
		plan("branch protection of the default branch", protectionTo(wantChecks(p))),
	}
	if p.NoCodeFlow {
		steps[len(steps)-1] = unprotected("branch protection of the default branch", NotRead)
	}
	for _, e := range ir.States {
		name := p.TaskStates[e.Name]
		if name == "" {
			name = e.Name
		}
		steps = append(steps, plan("label "+name+" ("+e.Name+")", "exists"))
	}
	for _, kv := range p.Variables {
		s := plan("variable "+kv[0], kv[1])
		s.Note = "created when missing, never overwritten"
		steps = append(steps, s)
	}
	for _, env := range p.Environments {
		v := p.MaintainersVar
		if v == "" {
			v = maintainers.DefaultVar
		}
		steps = append(steps, plan("environment "+env, "reviewers: the maintainers in "+v+" (else the admins), at most 6"))
	}
	return steps
}
