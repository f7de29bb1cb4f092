package ghactions

import (
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// callsRunner reports whether an actor's agent job can call the Runner: it holds an agent:*
// capability its token realizes (agent:launch, agent:list or agent:cancel, unscoped). Such a job
// installs autonomy (the trusted jobs' install step: the version that compiled the workflow,
// checked against its checksum) so the skill can run
// `"$AUTONOMY_BIN" runner --substrate gh-actions launch|get|list|cancel`; the runner reads the
// job's GITHUB_REPOSITORY, GITHUB_API_URL, GH_TOKEN and AUTONOMY_ACTOR, and the caller's
// capabilities from the installed manifest. The job's token is what the capabilities grant:
// actions: write only with agent:launch or agent:cancel, actions: read with agent:list. A scoped
// agent:* gets no permission (GitHub cannot narrow a token to one workflow; compile warns), so a
// job holding only scoped ones could not call GitHub and installs nothing.
func callsRunner(a *ir.Actor) bool {
	for _, c := range a.Capabilities {
		if strings.HasPrefix(c.Name, "agent:") && c.Scope == "" && grants[c.Name] != nil {
			return true
		}
	}
	return false
}

// SubstrateEnv names the runner's default substrate: the agent job of an actor that calls the
// Runner sets it to gh-actions, so the calls a skill writes for any substrate
// (`"$AUTONOMY_BIN" runner launch develop --ref 12`) reach GitHub's runner. The binary is named by
// AUTONOMY_BIN, not put on PATH: an agent CLI's login shell may reset PATH (Debian's
// /etc/profile does), while it keeps the environment's other variables.
const SubstrateEnv = substrates.TargetEnv
