package ghactions

import (
	"fmt"
	"slices"

	"github.com/autonomyhq/autonomy/ir"
)

// The model never holds the merge-relevant powers. The job that runs it (the agent job) may read
// code, converse on tasks and, for agent:*, dispatch workflows; moving code (contents and
// pull-requests: write) and blessing it (statuses: write) happen in a trusted job after it, which
// reads the agent's output as data (a git bundle, a verdict file) and runs the autonomy binary
// itself, installed at the version that compiled the workflow and checked against its checksum.

// Artifacts the agent job hands to the trusted jobs, and where each lands.
const (
	proposeArtifact = "autonomy-propose"
	reviewArtifact  = "autonomy-review"
	// BundleFile holds the agent's commits (absent when it made none).
	BundleFile = "commits.bundle"
	// VerdictFile holds the reviewer's verdict (empty when it left none).
	VerdictFile = "verdict.json"
)

// Pinned actions that carry the artifacts between jobs.
var (
	uploadArtifact   = action{"actions/upload-artifact", "ea165f8d65b6e75b540449e92b4886f43607fa02", "v4.6.2"}
	downloadArtifact = action{"actions/download-artifact", "d3f86a106a0bac45b974a628896c90dbdf5c8093", "v4.3.0"}
)

// effectGrants is what each trusted job may do. The propose job pushes a branch, opens the pull
// request, dispatches its reviewer, its human gate (the control workflow) and the checks a bot's
// pull request does not fire, and says on the work item why it refused a change (issues: write). The review job posts the status and the
// review comment, and, when the reviewer asks for a person (humanApprovalRequired), the ask on
// the pull request and the human gate pending (pull-requests: write covers a pull request's
// comments, assignees and labels). Neither runs anything the model wrote.
//
// A step playbook that elicits (steps.go) has two more: the ask job posts the elicitation on the
// work item; the resume job downloads another run's paused state and, once it applied the
// maintainer's answer, deletes it, so that the pause is spent (actions: write: no model runs
// there), and records the resume (issues: write).
var effectGrants = map[string]Permissions{
	"propose": {"contents": Write, "pull-requests": Write, "actions": Write, "issues": Write},
	"review":  {"contents": Read, "pull-requests": Write, "statuses": Write},
	"ask":     {"contents": Read, "issues": Write},
	"resume":  {"actions": Write, "contents": Read, "issues": Write},
}

// EffectGrant returns the permissions of the trusted job kind ("propose", "review", "ask",
// "resume").
func EffectGrant(kind string) Permissions { return effectGrants[kind] }

// effects lists the trusted jobs an actor's agent job is followed by.
func effects(a *ir.Actor) (propose, review bool) {
	for _, c := range a.Capabilities {
		switch {
		case c.Name == "code:propose":
			// A scope is enforced by autonomy gh propose, so a scoped proposer proposes too.
			propose = true
		case c.Name == "code:review" && c.Scope == "":
			review = true
		}
	}
	return propose, review
}

// modelHeld reports whether a capability's grant goes to the job that runs the model: the
// merge-relevant ones go to the trusted jobs instead.
func modelHeld(c ir.Capability) bool { return c.Name != "code:propose" && c.Name != "code:review" }

// exportCommitsScript bundles what the agent committed (and anything it left uncommitted) since
// the commit the job checked out, for the propose job. The agent wrote the checkout's git
// directory (its config names hooks, an fsmonitor, filter drivers, a signing program…): git here
// reads none of it. It reads the checkout's HEAD and objects into a repository of this step's
// own, outside the agent's reach, with no system or global config, and commits the working
// tree's changes there; the propose job treats the bundle as data.
const exportCommitsScript = `out="$RUNNER_TEMP/` + proposeArtifact + `"
mkdir -p "$out"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
ws="$PWD"
src="$(git -c core.fsmonitor=false -c core.hooksPath=/dev/null rev-parse --path-format=absolute --git-common-dir)"
head="$(git -c core.fsmonitor=false -c core.hooksPath=/dev/null rev-parse --verify --end-of-options 'HEAD^{commit}')"
export GIT_DIR="$RUNNER_TEMP/autonomy-export.git"
rm -rf "$GIT_DIR"
git init --quiet --bare "$GIT_DIR"
printf '%s\n' "$src/objects" > "$GIT_DIR/objects/info/alternates"
if [ -f "$src/shallow" ]; then cp "$src/shallow" "$GIT_DIR/shallow"; fi
git symbolic-ref HEAD refs/heads/autonomy-export
git update-ref HEAD "$head"
export GIT_WORK_TREE="$ws"
git read-tree HEAD
git add -A
if ! git diff --cached --quiet HEAD; then
  git commit --quiet --no-verify -m "${AUTONOMY_ACTOR}: changes left uncommitted"
fi
if [ "$(git rev-list --count "${AUTONOMY_BASE}..HEAD")" -gt 0 ]; then
  git bundle create "$out/` + BundleFile + `" "${AUTONOMY_BASE}..HEAD"
else
  echo "no commits" > "$out/none"
fi
`

// exportVerdictScript hands the reviewer's verdict to the review job (an empty file when the
// agent left none, which the review job reports).
const exportVerdictScript = `out="$RUNNER_TEMP/` + reviewArtifact + `"
mkdir -p "$out"
if [ -s "$RUNNER_TEMP/autonomy-result.json" ]; then
  cp "$RUNNER_TEMP/autonomy-result.json" "$out/` + VerdictFile + `"
else
  : > "$out/` + VerdictFile + `"
fi
`

// exportSteps are the agent job's last steps: its output, uploaded for the trusted jobs. Built
// once per compile and shared.
func (c *compiler) exportSteps(propose, review bool) seq {
	key := fmt.Sprint(propose, review)
	if steps, ok := c.exports[key]; ok {
		return steps
	}
	var steps seq
	if propose {
		steps = append(steps,
			mapping{{key: "name", value: "Export the commits"}, {key: "env", value: mapping{{key: "AUTONOMY_BASE", value: expr("github.sha")}}}, {key: "run", value: literal(exportCommitsScript)}},
			uploadArtifact.step("Upload the commits", artifactWith(proposeArtifact, true)))
	}
	if review {
		steps = append(steps,
			mapping{{key: "name", value: "Export the verdict"}, {key: "run", value: literal(exportVerdictScript)}},
			uploadArtifact.step("Upload the verdict", artifactWith(reviewArtifact, true)))
	}
	if c.exports == nil {
		c.exports = map[string]seq{}
	}
	c.exports[key] = c.emit.sharedSeq(steps)
	return steps
}

func artifactWith(name string, upload bool) mapping {
	m := mapping{{key: "name", value: name}, {key: "path", value: expr("runner.temp") + "/" + plain(name)}}
	if upload {
		m.add("if-no-files-found", plain("error"))
		m.add("retention-days", 1)
	}
	return m
}

// effectJob is a trusted job after the agent job: kind is "propose" or "review".
func (c *compiler) effectJob(a *ir.Actor, kind string, env mapping) mapping {
	name := a.Name.Value
	if c.effectSteps == nil {
		c.effectSteps = map[string]seq{}
	}
	steps, ok := c.effectSteps[kind]
	if !ok {
		// The same steps serve every actor of the compile (the emitter only reads them).
		artifact, args := proposeArtifact, `"$AUTONOMY_BIN" gh propose --bundle "$RUNNER_TEMP/`+proposeArtifact+`/`+BundleFile+`"`
		checkoutWith := mapping{{key: "persist-credentials", value: false}, {key: "fetch-depth", value: 0}}
		if kind == "review" {
			artifact, args = reviewArtifact, `"$AUTONOMY_BIN" gh review --verdict "$RUNNER_TEMP/`+reviewArtifact+`/`+VerdictFile+`"`
			checkoutWith = mapping{{key: "persist-credentials", value: false}, {key: "sparse-checkout", value: dataDir}}
		}
		steps = seq{
			checkout.step("Check out the repository", checkoutWith),
			downloadArtifact.step("Download the agent's output", artifactWith(artifact, false)),
			c.toolStep(),
			mapping{{key: "name", value: "autonomy gh " + kind}, {key: "run", value: literal(args + "\n")}},
		}
		c.effectSteps[kind] = c.emit.sharedSeq(steps)
	}
	job := make(mapping, 0, 8)
	job.add("name", name+" ("+kind+")")
	job.add("needs", plain("agent"))
	job.add("if", expr(pausedGuard))
	job.add("runs-on", runsOn(c.box.runsOn))
	job.add("timeout-minutes", 10)
	job.add("permissions", c.permissions(effectGrants[kind]))
	job.add("env", env)
	job.add("steps", steps)
	return job
}

// effectEnv is what a trusted job reads: the subject (resolved from the same trigger) and the
// installation's data.
func (c *compiler) effectEnv(a *ir.Actor, agentEnv mapping) mapping {
	// The params are not passed: a trusted job needs the subject only, and carries no text an
	// outsider wrote (a comment's body) that it does not need.
	env := make(mapping, 0, 12)
	if s := c.subject(a); s != "" {
		env.add("AUTONOMY_SUBJECT", expr(s))
	}
	for _, e := range agentEnv {
		switch e.key {
		case "AUTONOMY_ACTOR", "AUTONOMY_CAPABILITIES", "AUTONOMY_REVIEWER", "AUTONOMY_REVIEWER_WORKFLOW",
			"AUTONOMY_REVIEWER_REF_INPUT", "AUTONOMY_RESULT_SCHEMA", "AUTONOMY_HUMAN_REQUIRED_PATHS", "AUTONOMY_POLICY",
			"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL":
			env = append(env, e)
		}
	}
	if proposes, _ := effects(a); proposes && c.gated() {
		if h := c.inputActor(); h != "" {
			env.add("AUTONOMY_INPUT_ACTOR", h)
		}
	}
	env.add("GH_TOKEN", expr("github.token"))
	return env
}

// proposeScope is the path glob of a scoped code:propose for autonomy gh propose: the scope as
// written, or the path of the documents.roles entry it names.
func (c *compiler) proposeScope(a *ir.Actor) string {
	for _, cp := range a.Capabilities {
		if cp.Name != "code:propose" || cp.Scope == "" {
			continue
		}
		if c.p.Documents != nil {
			for _, r := range c.p.Documents.Roles {
				if r.Name.Value == cp.Scope {
					return r.Path.Value
				}
			}
		}
		return cp.Scope
	}
	return ""
}

// reachable returns a reviewer with a dispatch trigger forwarding subject.ref, adding one when it
// has none: its input is the name of the param its events forward subject.ref under (PR when
// none does), so the param resolves from whichever trigger fired.
func reachable(rv *ir.Actor) *ir.Actor {
	name := ""
	for _, t := range rv.Triggers {
		for _, p := range t.Params {
			if p.Source.Value == "subject.ref" {
				if t.Kind == ir.Dispatch {
					return rv
				}
				if name == "" {
					name = p.Name.Value
				}
			}
		}
	}
	if name == "" {
		name = "PR"
	}
	b := *rv
	b.Triggers = append(slices.Clone(rv.Triggers), &ir.Trigger{Pos: rv.TriggersPos, Kind: ir.Dispatch, Dispatch: ir.String{Value: "true", Pos: rv.TriggersPos},
		Params: []ir.Param{{Name: ir.String{Value: name, Pos: rv.TriggersPos}, Source: ir.String{Value: "subject.ref", Pos: rv.TriggersPos}}}})
	return &b
}

// effectKinds names the trusted jobs an agent job is followed by, in workflow order.
func effectKinds(propose, review bool) []string {
	switch {
	case propose:
		return []string{"propose"}
	case review:
		return []string{"review"}
	}
	return nil
}
