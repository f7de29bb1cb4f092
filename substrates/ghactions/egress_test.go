package ghactions

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/substrates/ghactions/ghproxy"
)

// agentSteps are the agent job's steps of actor develop, parsed, by name.
func agentSteps(t *testing.T, box string) ([]string, map[string]map[string]any) {
	t.Helper()
	out := compileOK(t, refProfile(box))
	var names []string
	byName := map[string]map[string]any{}
	for _, st := range job(t, file(t, out, WorkflowPath("develop")), "agent")["steps"].([]any) {
		m := st.(map[string]any)
		name, _ := m["name"].(string)
		names = append(names, name)
		byName[name] = m
	}
	return names, byName
}

// TestEgressInTheAgentJob: a preset's agent runs through autonomy gh jail, given the allowlist
// and the private guard; the sandbox is readied after the model proxy starts and before sudo is
// dropped; the egress log is uploaded with the transcript.
func TestEgressInTheAgentJob(t *testing.T) {
	names, steps := agentSteps(t, `      egress: { allow: [registry.npmjs.org, "*.pythonhosted.org", "proxy.example.com:8443"] }
      private_egress_guard: true
`)
	order := strings.Join(names, " | ")
	if !strings.Contains(order, "Start the model proxy | Prepare the agent's network sandbox | Drop sudo | Run develop") {
		t.Errorf("the agent job's steps: %s", order)
	}
	run := steps["Run develop"]
	env := run["env"].(map[string]any)
	var allow []string
	if err := json.Unmarshal([]byte(env[ghproxy.EgressAllowEnv].(string)), &allow); err != nil || strings.Join(allow, " ") != "registry.npmjs.org *.pythonhosted.org proxy.example.com:8443" {
		t.Errorf("%s = %v (%v)", ghproxy.EgressAllowEnv, env[ghproxy.EgressAllowEnv], err)
	}
	if env[ghproxy.EgressGuardEnv] != "true" {
		t.Errorf("%s = %v, want true", ghproxy.EgressGuardEnv, env[ghproxy.EgressGuardEnv])
	}
	script := run["run"].(string)
	if !strings.Contains(script, `"$AUTONOMY_BIN" gh jail -- "$AUTONOMY_AGENT_0" `) {
		t.Errorf("the agent does not run in the jail:\n%s", script)
	}
	path := steps["Upload the transcript"]["with"].(map[string]any)["path"].(string)
	if !strings.Contains(path, "/autonomy-model/"+ghproxy.EgressFile) {
		t.Errorf("the egress log is not uploaded: %s", path)
	}
	// The default: nothing allowed, the guard off.
	_, steps = agentSteps(t, "      model: gpt-5-codex\n")
	env = steps["Run develop"]["env"].(map[string]any)
	if env[ghproxy.EgressAllowEnv] != "[]" || env[ghproxy.EgressGuardEnv] != "false" {
		t.Errorf("default egress env: %v %v", env[ghproxy.EgressAllowEnv], env[ghproxy.EgressGuardEnv])
	}
}

// Your own agent command runs as a preset's does: through autonomy gh jail, given the allowlist
// and the guard, its sandbox readied before sudo goes and its git directory removed last; neither
// setting draws a warning.
func TestEgressCustomAgentIsJailed(t *testing.T) {
	box := `      agent: [my-agent, --go]
      egress: { allow: [registry.npmjs.org] }
      private_egress_guard: true
`
	names, steps := agentSteps(t, box)
	order := strings.Join(names, " | ")
	if !strings.Contains(order, "Start the model proxy | Prepare the agent's network sandbox | Drop sudo | Run develop") || names[len(names)-1] != "Remove the agent's git directory" {
		t.Errorf("the agent job's steps: %s", order)
	}
	run := steps["Run develop"]
	if script := run["run"].(string); !strings.Contains(script, `"$AUTONOMY_BIN" gh jail -- "$AUTONOMY_AGENT_0" "$AUTONOMY_AGENT_1" < "$RUNNER_TEMP/autonomy-prompt.md"`) {
		t.Errorf("your own agent command does not run in the jail:\n%s", script)
	}
	env := run["env"].(map[string]any)
	if env[ghproxy.EgressAllowEnv] != `["registry.npmjs.org"]` || env[ghproxy.EgressGuardEnv] != "true" {
		t.Errorf("egress env: %v %v", env[ghproxy.EgressAllowEnv], env[ghproxy.EgressGuardEnv])
	}
	if got := compileOK(t, refProfile(box)).Warnings.String(); strings.Contains(got, "egress") {
		t.Errorf("a warning about the egress settings:\n%s", got)
	}
}

func TestEgressBoxErrors(t *testing.T) {
	for box, want := range map[string]string{
		`egress: { allow: ["https://registry.npmjs.org"] }`: `ir.yml:25:25: policy.box.gh-actions.egress.allow: "https://registry.npmjs.org" names a scheme`,
		`egress: { allow: ["*"] }`:                          `policy.box.gh-actions.egress.allow: "*": a wildcard is a leading *.`,
		`egress: { allow: [registry.npmjs.org:99999] }`:     `the port must be a number from 1 to 65535`,
		`egress: { deny: [a.org] }`:                         `ir.yml:25:17: policy.box.gh-actions.egress.deny is not an egress setting`,
		`egress: [a.org]`:                                   `policy.box.gh-actions.egress must be a mapping`,
	} {
		_, err := compileErr(t, refProfile("      "+box+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", box, err, want)
		}
	}
}

// TestSandboxStepScript runs the step that readies the sandbox as the job would, on an image
// without bubblewrap and socat and with Ubuntu 24.04's user namespace restriction, sudo a fake
// that records what it is asked to run: it installs both and loads an AppArmor profile that lets
// bubblewrap alone make user namespaces. (A hosted runner is where it really runs.)
func TestSandboxStepScript(t *testing.T) {
	_, steps := agentSteps(t, "      model: gpt-5-codex\n")
	script := steps["Prepare the agent's network sandbox"]["run"].(string)
	dir := t.TempDir()
	sysctl := filepath.Join(dir, "restrict")
	if err := os.WriteFile(sysctl, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const real = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
	if !strings.Contains(script, real) {
		t.Fatalf("the script no longer reads %s:\n%s", real, script)
	}
	script = strings.ReplaceAll(script, real, sysctl)
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, "sudo.log")
	fake := "#!/bin/bash\n{ printf '%s ' \"$@\"; echo; if [ \"$2\" = tee ]; then cat; fi; } >> " + record + "\n"
	if err := os.WriteFile(filepath.Join(bin, "sudo"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"cat", "bash"} { // only these: bwrap and socat are missing
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(bin, "bash"), "-eo", "pipefail", "-c", script)
	cmd.Env = []string{"PATH=" + bin}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the step failed: %v\n%s", err, out)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, want := range []string{
		"-n apt-get install -y -qq bubblewrap socat \n",
		"-n tee /etc/apparmor.d/autonomy-bwrap \nabi <abi/4.0>,\ninclude <tunables/global>\nprofile autonomy-bwrap /usr/bin/bwrap flags=(unconfined) {\n  userns,\n}\n",
		"-n apparmor_parser -r /etc/apparmor.d/autonomy-bwrap \n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("sudo was not asked for %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "sysctl") {
		t.Errorf("the step turned the restriction off for every program:\n%s", got)
	}
}
