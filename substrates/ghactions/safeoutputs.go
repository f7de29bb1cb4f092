package ghactions

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	agents "github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// Safe outputs (docs/gh-actions.md): the job that runs the model holds read permissions only.
// The agent CLI gets autonomy's MCP server (autonomy gh mcp), whose tools are derived from the
// actor's capabilities; each effect the model asks for is checked and recorded as a line of the
// safe-output file, which the agent job uploads. The trusted job "apply" (no model) downloads
// it and runs autonomy gh apply, which checks every effect again against the manifest of the
// commit the run was triggered for and realizes what passes with its own token.

const (
	// outputsArtifact is the agent job's safe-output artifact, and the directory it is left in
	// under RUNNER_TEMP.
	outputsArtifact = "autonomy-outputs"
	// OutputsFile is the safe-output file in it.
	OutputsFile = "outputs.jsonl"
)

// MCPServerEnv are the variables of the agent step that autonomy gh mcp reads; a CLI that starts
// its MCP servers with a minimal environment (codex) is told to pass them on.
var MCPServerEnv = []string{"GH_TOKEN", "GITHUB_REPOSITORY", "GITHUB_API_URL", "GITHUB_SERVER_URL", "GITHUB_GRAPHQL_URL",
	"GITHUB_RUN_ID", "GITHUB_SHA", "GITHUB_WORKSPACE", "AUTONOMY_ACTOR", "AUTONOMY_OUTPUTS", "AUTONOMY_POLICY"}

// applied are the capabilities whose effects autonomy gh apply realizes, and what each needs of
// its token: the standard's github realization (grants). agent:update is applied too, as a
// refusal the step summary reports (GitHub cannot pause a run).
var applied = []string{"tasks:converse", "tasks:author", "agent:launch", "agent:cancel", "agent:update"}

// applies reports whether an actor's agent job is followed by the apply job: it is an agent
// whose skill runs with the MCP server (not a script, which runs no model, nor a step playbook,
// whose steps get no server yet), and it holds a capability whose effects apply realizes, in any
// scope (apply enforces the scope). An actor holding none has no effect for apply to realize:
// its result and its proposal or verdict have trusted jobs of their own.
//
// A script that does not opt out of a result is followed by it too, to verify its result: its
// effects are its own (its job holds its grants), so its apply job reads the installation only
// and realizes none (scriptOutputsScript leaves it no safe output).
func applies(a *ir.Actor, steps bool) bool {
	if steps {
		return false
	}
	if verifiedResult(a) {
		return true // the apply job verifies its result (effect.VerifyResult)
	}
	if !a.Skill {
		return false
	}
	for _, c := range a.Capabilities {
		for _, name := range applied {
			if c.Name == name {
				return true
			}
		}
	}
	return false
}

// exportResultScript hands the session's result file (the final message, for a session that
// did not call submit_result) to the apply job, with its safe outputs: a regular file only (not a
// link the agent left), capped.
const exportResultScript = `if [ -f "$AUTONOMY_RESULT" ] && [ ! -L "$AUTONOMY_RESULT" ]; then
  head -c ` + resultCap + ` -- "$AUTONOMY_RESULT" > "$RUNNER_TEMP/autonomy-outputs/` + effect.ResultFile + `"
fi
`

// scriptResultScript is a script's run step's preamble when its apply job verifies its result:
// the script writes its result (one JSON object) to the file AUTONOMY_RESULT names.
const scriptResultScript = `export AUTONOMY_RESULT="$RUNNER_TEMP/autonomy-result.json"
rm -f -- "$AUTONOMY_RESULT"
rm -rf -- "$RUNNER_TEMP/` + outputsArtifact + `"
mkdir -p "$RUNNER_TEMP/` + outputsArtifact + `"
`

// scriptVerdictScript is a reviewing script's run step's preamble: the script writes its verdict
// (one JSON object) to the file AUTONOMY_RESULT names, which the export step hands to the review
// job.
const scriptVerdictScript = `export AUTONOMY_RESULT="$RUNNER_TEMP/autonomy-result.json"
rm -f -- "$AUTONOMY_RESULT"
`

// scriptOutputsScript follows the script: an empty safe-output file (a script's effects are made
// with its own job's token, never by the apply job; whatever it wrote there is dropped), and its
// result, for the apply job to verify.
const scriptOutputsScript = `: > "$RUNNER_TEMP/` + outputsArtifact + `/` + OutputsFile + `"
rm -f -- "$RUNNER_TEMP/` + outputsArtifact + `/` + effect.ResultFile + `"
` + exportResultScript

// resultCap bounds the result file the apply job reads, in bytes.
const resultCap = "1048576"

// resultPrompt is what the agent reads on stdin: the skill, followed for an actor with the default
// contract by its instructions (tools.ResultInstructions, as the local runner gives them).
func resultPrompt(a *ir.Actor, env *mapping, script *strings.Builder) string {
	if !defaultResult(a) {
		return `"$AUTONOMY_BEHAVIOR"`
	}
	env.add("AUTONOMY_RESULT_INSTRUCTIONS", literal(tools.ResultInstructions()))
	script.WriteString(`{ cat "$AUTONOMY_BEHAVIOR"; printf '%s' "$AUTONOMY_RESULT_INSTRUCTIONS"; } > "$RUNNER_TEMP/autonomy-prompt.md"` + "\n")
	return `"$RUNNER_TEMP/autonomy-prompt.md"`
}

// verifiedResult reports whether the apply job verifies the actor's sessions delivered a result
// that validates against its contract: the default one or a declared one, named or inline. A
// reviewer's declared verdict is not: its review job validates it, and posts it on the head it
// reviewed.
func verifiedResult(a *ir.Actor) bool {
	if !(a.Skill || isScript(a)) || a.Contract() == nil {
		return false
	}
	_, reviews := effects(a)
	return !reviews || a.Result == nil
}

// manifestResult is what the manifest says of the contract the apply job verifies: its name, or
// for an inline schema the path it is installed at (read at the trusted commit).
func manifestResult(a *ir.Actor, m *actorManifest) {
	switch {
	case !verifiedResult(a):
	case a.Result == nil:
		m.Result = ir.DefaultContract
	case a.Result.Named.Value != "":
		m.Result = a.Result.Named.Value
	default:
		m.ResultSchema = resultPath(a)
	}
}

// defaultResult reports whether the actor's sessions deliver the default result contract
// (autonomy.result.v1): a skill that declares no result and does not opt out.
func defaultResult(a *ir.Actor) bool { return a.Skill && a.Result == nil && !a.IsHuman() }

// applyGrant is what the apply job of an actor may do: read the installation (contents: read),
// and write what the actor's capabilities map to (issues: write for tasks:converse and
// tasks:author, actions: write for agent:launch and agent:cancel), scoped or not.
func applyGrant(a *ir.Actor) Permissions {
	p := Permissions{"contents": Read}
	if isScript(a) {
		return p // it verifies the script's result only
	}
	for _, c := range a.Capabilities {
		for _, name := range applied {
			if c.Name == name {
				p.merge(grants[name])
			}
		}
	}
	return p
}

// readOnly is q with every write lowered to read: what the job that runs the model may hold of
// a capability's grant (it reads; the apply job writes).
func readOnly(q Permissions) Permissions {
	p := make(Permissions, len(q))
	for s := range q {
		p[s] = Read
	}
	return p
}

// outputsScript makes the safe-output file before the agent runs, so the upload finds it even
// when the agent asked for nothing.
const outputsScript = `export AUTONOMY_OUTPUTS="$RUNNER_TEMP/` + outputsArtifact + `/` + OutputsFile + `"
mkdir -p "$RUNNER_TEMP/` + outputsArtifact + `"
: > "$AUTONOMY_OUTPUTS"
`

// shimsScript puts the shims first on the agent's PATH (autonomy gh shim install): its gh and
// bun turn the writes existing skills run (gh issue comment, gh workflow run, bun
// scripts/runner.ts launch) into effects checked as the MCP server checks them, and pass reads
// to the real programs; autonomy is the binary, whose runner records a launch in this job.
// BASH_ENV puts them first again after a login shell's profile resets PATH.
const shimsScript = `shims="$RUNNER_TEMP/autonomy-shims"
"$AUTONOMY_BIN" gh shim install "$shims"
export PATH="$shims:$PATH" BASH_ENV="$shims/env.sh"
`

// uploadOutputsStep uploads the safe-output file after the agent step, whatever it did.
func uploadOutputsStep() mapping {
	return withIf(uploadArtifact.step("Upload the safe outputs", artifactWith(outputsArtifact, true)), "always()")
}

// applyJob is the trusted job after the agent job that realizes its safe outputs: no model; the
// installation is read at github.sha by autonomy gh apply itself.
func (c *compiler) applyJob(a *ir.Actor, env mapping) mapping {
	if c.effectSteps == nil {
		c.effectSteps = map[string]seq{}
	}
	steps, ok := c.effectSteps["apply"]
	if !ok {
		steps = seq{
			policyCheckout,
			downloadArtifact.step("Download the safe outputs", artifactWith(outputsArtifact, false)),
			c.toolStep(),
			mapping{{key: "name", value: "autonomy gh apply"}, {key: "run", value: literal(`"$AUTONOMY_BIN" gh apply --outputs "$RUNNER_TEMP/` + outputsArtifact + `/` + OutputsFile + `"` + "\n")}},
		}
		c.effectSteps["apply"] = c.emit.sharedSeq(steps)
	}
	job := make(mapping, 0, 8)
	job.add("name", a.Name.Value+" (apply)")
	job.add("needs", plain("agent"))
	// As gh-aw's safe-output jobs: the effects the model asked for before it failed are applied
	// too (each was checked, and is checked again); a skipped agent job asked for nothing.
	cond := "!cancelled() && needs.agent.result != 'skipped' && " + pausedGuard
	if c.pausedStep(a, c.installsTool(a)) != nil {
		// An agent job its pause check stopped ran no model: nothing to apply (paused.go).
		cond += " && needs.agent.outputs." + pausedStepID + " != 'failure'"
	}
	job.add("if", expr(cond))
	job.add("runs-on", runsOn(c.box.runsOn))
	job.add("timeout-minutes", 10)
	job.add("permissions", c.permissions(applyGrant(a)))
	job.add("env", env)
	job.add("steps", steps)
	return job
}

// mcpWords writes the bash array mcp: the words that give the agent CLI autonomy gh mcp, the
// program being "$AUTONOMY_BIN" (a path of the install step's, under RUNNER_TEMP).
func (c *compiler) mcpWords(script *strings.Builder) {
	const sentinel = "@AUTONOMY_BIN@"
	script.WriteString("mcp=(")
	words := c.box.agent.Preset.MCPArgs(mcpServer(sentinel))
	for i, w := range words {
		if i > 0 {
			script.WriteByte(' ')
		}
		before, after, found := strings.Cut(w, `"`+sentinel+`"`)
		if !found {
			script.WriteString(shellQuote(w))
			continue
		}
		script.WriteString(shellQuote(before+`"`) + `"${AUTONOMY_BIN}"` + shellQuote(`"`+after))
	}
	script.WriteString(")\n")
}

// mcpConfigScript gives your own agent command (policy.box.gh-actions.agent: [...]) the MCP
// server a preset's CLI gets, as a configuration file in the shape MCP clients share
// (agent.MCPConfig's), at AUTONOMY_MCP_CONFIG: autonomy gh mcp by the binary's absolute path,
// with the variables it reads (MCPServerEnv) in its env, for a client that starts its servers
// with a minimal environment.
// Built on first use: the first json.Marshal of a process builds encoding/json's encoders.
var mcpConfigScript = sync.OnceValue(func() string {
	return `export AUTONOMY_MCP_CONFIG="$RUNNER_TEMP/autonomy-mcp.json"
jq -n --arg bin "$AUTONOMY_BIN" --argjson names '` + jsonList(MCPServerEnv) + `' \
  '{mcpServers: {autonomy: {type: "stdio", command: $bin, args: ["gh", "mcp"], env: ($ENV | with_entries(select(.key as $k | $names | index($k))))}}}' > "$AUTONOMY_MCP_CONFIG"
`
})

// jsonList is ws as a JSON array.
func jsonList(ws []string) string {
	b, _ := json.Marshal(ws)
	return string(b)
}

// mcpServer is autonomy gh mcp as program runs it.
func mcpServer(program string) agents.MCPServer {
	return agents.MCPServer{Command: program, Args: []string{"gh", "mcp"}, Env: MCPServerEnv}
}

// tools reads policy.box.gh-actions.tools: { max: { TOOL: N }, staged: BOOL }. It is carried to
// the jobs in .autonomy/policy.json: the MCP server and the apply job cap each tool's effects per
// session at max (tools.DefaultMax for a tool it does not name), and staged applies nothing.
func (r *boxReader) tools(v *yaml.Node) {
	const example = "e.g. tools: { max: { comment: 3, launch: 1 }, staged: true }"
	if v.Kind != yaml.MappingNode {
		r.errorf(v, example, "tools must be a mapping")
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		switch k, val := v.Content[i], v.Content[i+1]; k.Value {
		case "max":
			r.toolMax(val)
		case "staged":
			r.flag(val, "tools.staged")
		default:
			r.errorf(k, ir.Suggest(k.Value, []string{"max", "staged"}), "tools: unknown key %q", k.Value)
		}
	}
}

// toolMax reads tools.max: each key an effect tool, each value a count of at least 0.
func (r *boxReader) toolMax(v *yaml.Node) {
	var names []string
	for _, t := range tools.Catalog {
		if t.Effect {
			names = append(names, t.Name)
		}
	}
	if v.Kind != yaml.MappingNode {
		r.errorf(v, "e.g. max: { comment: 3, launch: 1 }", "tools.max must be a mapping of tool names to counts")
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, n := v.Content[i], v.Content[i+1]
		if !slices.Contains(names, k.Value) {
			hint := ir.Suggest(k.Value, names)
			if hint == "" || !strings.HasPrefix(hint, "did you mean") {
				hint = "the tools that change something are " + strings.Join(names, ", ")
			}
			r.errorf(k, hint, "tools.max: %q is not a tool that changes anything", k.Value)
			continue
		}
		if c, err := strconv.Atoi(n.Value); n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil || c < 0 {
			r.errorf(n, fmt.Sprintf("write a count, e.g. %s: 3 (0 refuses every %s)", k.Value, k.Value), "tools.max.%s must be a whole number of at least 0", k.Value)
		}
	}
}
