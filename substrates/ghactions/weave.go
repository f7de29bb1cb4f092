package ghactions

import (
	"github.com/autonomyhq/autonomy/ir"
)

// weaveStepName names the agent job's step that weaves the overlays into the skill.
const weaveStepName = "Weave the overlays"

// WovenSkill is where the weave step leaves the woven skill, under $RUNNER_TEMP; the agent
// step of an actor with overlays reads it instead of the installed skill.
const WovenSkill = "autonomy-woven-skill.md"

// weaveScript weaves at run time (an overlay's ttl counts from its updated_at against the
// clock, so weaving at compile time would make the output depend on when it ran). Every value
// comes from the environment; the summary of what was woven and skipped is written by the
// binary itself into the step summary.
const weaveScript = `"$AUTONOMY_BIN" playbook weave --actor "$AUTONOMY_WEAVE_ACTOR" --skill "$AUTONOMY_BEHAVIOR" --substrate "$AUTONOMY_WEAVE_SUBSTRATE" --summary "$GITHUB_STEP_SUMMARY" > "$RUNNER_TEMP/` + WovenSkill + `"
`

// weaves reports whether any overlay of the profile's package targets the actor (by role,
// operator, its skill's declared name or this runtime, globs included), whatever its status:
// which are woven is decided at run time.
func (c *compiler) weaves(a *ir.Actor) bool { return c.r.Weaves(a, Name) }

// weaveStep runs autonomy playbook weave on the installed files of the checkout.
func (c *compiler) weaveStep(a *ir.Actor) mapping {
	return mapping{
		{key: "name", value: weaveStepName},
		{key: "env", value: mapping{
			{key: "AUTONOMY_WEAVE_ACTOR", value: literalValue(a.Name.Value)},
			{key: "AUTONOMY_WEAVE_SUBSTRATE", value: Name},
		}},
		{key: "run", value: literal(weaveScript)},
	}
}

// wovenRunStep is the agent step reading the woven skill: the step's own env (which wins over
// the job's) points AUTONOMY_BEHAVIOR at it.
func wovenRunStep(run mapping) mapping {
	out := make(mapping, len(run))
	copy(out, run)
	for i, kv := range out {
		if kv.key == "env" {
			env := append(mapping{}, kv.value.(mapping)...)
			env.add("AUTONOMY_BEHAVIOR", expr("runner.temp")+"/"+WovenSkill)
			out[i].value = env
		}
	}
	return out
}
