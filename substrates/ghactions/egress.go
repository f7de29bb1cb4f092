package ghactions

import (
	"encoding/json"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghproxy"
)

// The agent's network on gh-actions (docs/gh-actions.md#egress): the agent (a preset, your own
// agent command, or a step playbook's run and so every step's agent) runs through autonomy gh
// jail, in a network namespace of its own (bubblewrap, unprivileged, in a user namespace) into
// which only the model proxy and an egress CONNECT proxy admitting
// policy.box.gh-actions.egress.allow are bridged. A step before sudo is dropped installs
// bubblewrap and socat when the image lacks them and, where Ubuntu restricts unprivileged user
// namespaces to programs an AppArmor profile allows (24.04), gives bubblewrap such a profile.

// jobKey reads the keys of the agent job's model and network: model, transcript_days (both
// modelproxy.go) and egress.
func (r *boxReader) jobKey(b *box, k, v *yaml.Node) {
	switch k.Value {
	case "model":
		r.modelKey(b, v)
	case "transcript_days":
		r.transcriptDays(b, v)
	default:
		b.egress = substrates.ReadEgress(v, r.errorf)
	}
}

// egressEnv is what autonomy gh jail reads: the allowlist and the private guard.
func (c *compiler) egressEnv(env *mapping) {
	allow := substrates.EgressStrings(c.box.egress)
	if allow == nil {
		allow = []string{}
	}
	data, _ := json.Marshal(allow) // strings: cannot fail
	env.add(ghproxy.EgressAllowEnv, literalValue(string(data)))
	guard := "false"
	if c.box.ref.guard {
		guard = "true"
	}
	env.add(ghproxy.EgressGuardEnv, guard)
}

// sandboxScript readies the agent's network sandbox while the job still has sudo: bubblewrap
// and socat, and, where the kernel lets only programs an AppArmor profile allows make user
// namespaces, that profile for bubblewrap alone (not the system-wide switch).
const sandboxScript = `need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v socat >/dev/null 2>&1 || need+=(socat)
if [ ${#need[@]} -gt 0 ]; then
  sudo -n apt-get install -y -qq "${need[@]}" >/dev/null || { sudo -n apt-get update -qq && sudo -n apt-get install -y -qq "${need[@]}" >/dev/null; }
fi
if [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null || echo 0)" = 1 ]; then
  printf '%s\n' 'abi <abi/4.0>,' 'include <tunables/global>' 'profile autonomy-bwrap /usr/bin/bwrap flags=(unconfined) {' '  userns,' '}' | sudo -n tee /etc/apparmor.d/autonomy-bwrap >/dev/null
  sudo -n apparmor_parser -r /etc/apparmor.d/autonomy-bwrap
fi
`

// sandboxStep runs sandboxScript, before sudo is dropped.
func sandboxStep() mapping {
	return mapping{{key: "name", value: "Prepare the agent's network sandbox"}, {key: "run", value: literal(sandboxScript)}}
}

// disarmScript removes the checkout's git directory, which the agent wrote (its config can name
// an fsmonitor that any git reading the index runs), once the job is done with it: actions/checkout's
// post step, which runs git in the checkout outside the jail, does nothing where .git/config is
// gone. The agent may have taken the write permission away; its processes are gone with its
// jail, so nothing puts the directory back.
const disarmScript = `chmod u+rwx -- "$GITHUB_WORKSPACE" 2>/dev/null || true
if [ -d "$GITHUB_WORKSPACE/.git" ] && [ ! -L "$GITHUB_WORKSPACE/.git" ]; then
  chmod -R u+rwX -- "$GITHUB_WORKSPACE/.git" 2>/dev/null || true
fi
rm -rf -- "$GITHUB_WORKSPACE/.git"
if [ -e "$GITHUB_WORKSPACE/.git" ] || [ -L "$GITHUB_WORKSPACE/.git" ]; then
  echo "::error::cannot remove the agent's git directory $GITHUB_WORKSPACE/.git: actions/checkout's post step would run git in it"
  exit 1
fi
`

// disarmStep runs disarmScript last, whatever happened before.
// disarmStepName names disarmStep, which runs always().
const disarmStepName = "Remove the agent's git directory"

func disarmStep() mapping {
	return withIf(mapping{{key: "name", value: disarmStepName}, {key: "run", value: literal(disarmScript)}}, "always()")
}

// jailWords start the agent in the network sandbox.
var jailWords = []string{`"$AUTONOMY_BIN"`, "gh", "jail", "--"}

// guardSteps start the model proxy and take away what could reach it, readying the agent's
// network sandbox before sudo goes.
func (c *compiler) guardSteps() seq {
	return seq{c.proxyStep(), c.sharedStep("sandbox", sandboxStep), c.sharedStep("drop sudo", dropSudoStep)} // modelproxy.go
}

// jail is the agent's command words, run through autonomy gh jail, whose env then carries the
// allowlist.
func (c *compiler) jail(words []string, env *mapping) []string {
	c.egressEnv(env)
	return append(slices.Clone(jailWords), words...)
}
