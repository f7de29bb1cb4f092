//go:build unix

package local

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/egress"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
)

// confine wraps a proxied session's argv (a preset's, an explicit agent command's, a step
// playbook's run and so every step's agent) so that the agent, and everything it runs, has a
// network of its own (egress.Jail) in which only the session's model proxy and, with network on (the
// default), the egress proxy admitting policy.box.local.egress.allow are reachable, at the
// addresses its environment names. unconfine ends the bridges and the egress proxy once the agent
// is gone. Without a model proxy (the CLI uses its own login and must reach its provider) the
// agent is not confined: startProxy's log line says so.
func (sv *supervision) confine(ctx context.Context, argv []string, preset bool) (out []string, unconfine func(), err error) {
	unconfine = func() {}
	if sv.proxy == nil {
		return argv, unconfine, nil
	}
	if runtime.GOOS != "linux" {
		fmt.Fprintf(sv.logf, "autonomy: %s has no network namespaces: the agent's network is what its own sandbox allows (docs/local.md#egress)\n", runtime.GOOS)
		return argv, unconfine, nil
	}
	pol := sv.cfg.Egress
	if pol == nil {
		pol = &EgressPolicy{}
	}
	var cfg *egress.Config
	closeLog := func() {}
	if !pol.Off {
		if cfg, closeLog, err = sv.egressConfig(pol); err != nil {
			return nil, unconfine, err
		}
	}
	sb, err := egress.Open(ctx, cfg, portOf(sv.proxy.root))
	if err != nil {
		closeLog()
		return nil, unconfine, err
	}
	sv.env = sessionenv.With(sv.env, sb.Env...)
	// The agent CLIs' own logins stay out of the jail: the session reaches its model through the
	// proxy, with a key it never holds.
	hide, keep := sv.loginPaths(argv[0])
	c := &egress.Confinement{Writable: true, Hide: hide, Keep: keep}
	// Your own agent command makes no sandbox of its own that needs every capability (a preset's
	// CLI and a step playbook's preset agents make theirs): from a runner run as root it runs with
	// root's powers over files alone, so it cannot simply unmount what hides a login or read it
	// through another of your processes' /proc/PID/root. That narrows root and does not contain
	// it (docs/local.md says how it still gets out). It stays in the runner's pid namespace, where
	// its session tools prove who they are by their ancestry.
	c.RootFileCaps = sv.ownAgentCommand(preset)
	if sv.stateAt != "" {
		// The installation's own folder is read-only in the jail, but for the session's own
		// results folder (a preset writes its result there, and no other session can: a result
		// planted for another session would be taken for its own); the state folder is writable at stateAt alone, which the
		// agent's own sandbox leaves read-only (wallState).
		binds := []egress.Bind{{Path: sv.r.In.Path(dataDir)}, {Path: filepath.Dir(sv.ownResult), Write: true}}
		if sv.cfg.Steps {
			// A step playbook's run writes its ## ARTIFACTS into its own session's folder
			// (steps.go), as writable as its own result folder and no other session's.
			arts := sv.r.In.Path(ArtifactsDir(sv.s.ID))
			if err := os.MkdirAll(arts, 0o755); err != nil {
				sb.Close()
				closeLog()
				return nil, unconfine, err
			}
			binds = append(binds, egress.Bind{Path: arts, Write: true})
		}
		c.Binds, c.Aliases = binds, []egress.Alias{{Path: sv.r.In.Path(StateDir), At: sv.stateAt}}
	}
	return sb.WrapIn(c, argv), func() { sb.Close(); closeLog() }, nil
}

// ownAgentCommand reports whether the session's agent is your own command (policy.box.local.agent;
// AUTONOMY_LOCAL_AGENT's runs with no model proxy, so no jail), which makes no sandbox of its own,
// rather than a preset's CLI, which does: a skill's agent (preset says whether its argv is a
// preset's), or every step's of a step playbook. A workflow playbook's run is neither.
func (sv *supervision) ownAgentCommand(preset bool) bool {
	switch {
	case sv.cfg.Steps:
		_, _, stepPreset, err := sv.r.In.command(sv.r.opts.Env, sv.cfg)
		return err == nil && !stepPreset
	case sv.cfg.Workflow, sv.cfg.Command == nil || sv.cfg.Command.Script != nil:
		return false
	}
	return !preset
}

// loginPaths are where the agent CLIs keep their own logins, every preset's whichever runs the
// session, in the runner's environment (agent.Preset.Logins), and the operator's usual
// credentials (operatorLogins): the jail hides each. keep are what the session needs that such a
// folder may hold (egress.Confinement.Keep): its workspace, the installation, and the folder of
// the program it runs (prog, as on PATH, and where its link leads: Claude Code's local install
// is ~/.claude/local). A folder is hidden whole and they are bound back into it, never its other
// entries one by one, which an atomic rename of one of them would bring back (attack27).
func (sv *supervision) loginPaths(prog string) (hide, keep []string) {
	lookup := func(k string) string { return sessionenv.Lookup(sv.r.opts.Env, k) }
	paths := agent.HomePaths(operatorLogins, lookup)
	if xdg := lookup("XDG_CONFIG_HOME"); filepath.IsAbs(xdg) {
		paths = append(paths, filepath.Join(xdg, "gh"), filepath.Join(xdg, "git", "credentials"), filepath.Join(xdg, "gcloud"), filepath.Join(xdg, "containers", "auth.json"))
	}
	paths = append(paths, filepath.SplitList(lookup("KUBECONFIG"))...) // a list of files
	// An SSH agent's socket (its folder): one started the usual way is under the temporary
	// directory the jail shares, found by a glob whatever the session's environment says.
	if sock := lookup("SSH_AUTH_SOCK"); filepath.IsAbs(sock) {
		if dir := filepath.Dir(sock); dir != "/" && dir != "/tmp" && dir != filepath.Clean(os.TempDir()) {
			paths = append(paths, dir) // its own folder
		} else {
			paths = append(paths, sock) // a socket right in /tmp (ssh-agent -a, an editor's): itself
		}
	}
	for _, tmp := range []string{"/tmp", os.TempDir(), lookup("TMPDIR")} {
		if filepath.IsAbs(tmp) {
			agents, _ := filepath.Glob(filepath.Join(tmp, "ssh-*"))
			paths = append(paths, agents...)
		}
	}
	for _, name := range agent.Names() {
		p, _ := agent.Lookup(name)
		paths = append(paths, p.LoginPaths(lookup)...)
	}
	keep = []string{sv.workdir, sv.r.In.Dir}
	if !filepath.IsAbs(prog) {
		prog, _ = lookPath(sv.env, prog)
	}
	if prog != "" {
		keep = append(keep, filepath.Dir(prog))
		if real, err := filepath.EvalSymlinks(prog); err == nil {
			keep = append(keep, filepath.Dir(real))
		}
	}
	for _, path := range paths {
		if !slices.ContainsFunc(keep, func(k string) bool { return filepath.Clean(k) == filepath.Clean(path) }) {
			hide = append(hide, path) // a login folder that is the workspace itself stays
		}
	}
	return hide, keep
}

// operatorLogins are where the usual tools keep the operator's own credentials in a home: git's
// stored credentials, the GitHub CLI's login, netrc, SSH keys, registries' and clouds' logins,
// Kubernetes' configs. A proxied session needs none of them (its agent's git commits; the runner
// pushes); its jail hides them as it hides the agent CLIs' logins.
var operatorLogins = []string{
	"~/.git-credentials", "~/.config/git/credentials", "$GH_CONFIG_DIR", "~/.config/gh", "~/.netrc", "$NETRC",
	"~/.ssh", "~/.gnupg", "$GNUPGHOME",
	"~/.docker/config.json", "$DOCKER_CONFIG", "~/.config/containers/auth.json",
	"~/.aws", "$AWS_SHARED_CREDENTIALS_FILE", "$AWS_CONFIG_FILE", "~/.config/gcloud", "$CLOUDSDK_CONFIG",
	"$GOOGLE_APPLICATION_CREDENTIALS", "~/.azure", "$AZURE_CONFIG_DIR", "~/.kube",
	"~/.npmrc", "~/.pypirc", "~/.cargo/credentials.toml", "~/.cargo/credentials",
}

// wallState keeps the runner's state from the agent of a preset's session that works in the
// installation root, where its own sandbox (codex's, Claude Code's) lets it write the working
// directory and so .autonomy/state/state.db: confine makes .autonomy read-only in the agent's jail
// (a folder that is a mount point cannot be renamed away either), and the state folder writable
// again at a second place in the jail's private folder, outside the working directory and so
// read-only inside the agent's own sandbox. The session's MCP server (which the CLI starts
// outside its sandbox) and a step playbook's run (the supervisor's child) are told that place
// (StateEnv; dbPath). Its shell's runner verbs go through the session's door, which its
// supervisor answers as the session (door.go). An explicit agent command has no sandbox of its
// own inside the jail: it is not walled off this way (docs/local.md, "The wall").
func (sv *supervision) wallState() {
	c := sv.cfg.Command
	if sv.proxy == nil || runtime.GOOS != "linux" || sv.workdir != sv.r.In.Dir || c == nil || c.Preset == "" {
		return
	}
	parent, err := egress.JailsDir()
	if err != nil {
		return // confine fails on it
	}
	sv.stateAt = filepath.Join(parent, "state")
	sv.env = sessionenv.With(sv.env, StateEnv+"="+sv.stateAt)
}

// egressConfig is the session's egress proxy: what it admits, its decisions logged beside the
// session's transcript; closeLog closes that log once the proxy is stopped.
func (sv *supervision) egressConfig(pol *EgressPolicy) (*egress.Config, func(), error) {
	rules, err := pol.egressRules()
	if err != nil {
		return nil, nil, fmt.Errorf("policy.box.local.egress.allow: %v (compile again)", err)
	}
	path, ok := sv.r.In.TranscriptPath(sv.s.ID)
	if !ok {
		return nil, nil, fmt.Errorf("%q is not a session id", sv.s.ID)
	}
	if err := os.MkdirAll(sv.r.In.Path(TranscriptDir), 0o700); err != nil {
		return nil, nil, fmt.Errorf("cannot make the transcript folder: %v", err)
	}
	f, err := createNew(strings.TrimSuffix(path, ".jsonl")+EgressLogSuffix, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create its egress log: %v", err)
	}
	// Locally a private address a rule names literally is the operator's own choice; a name
	// never reaches one.
	cfg := &egress.Config{Allow: rules, Log: f, What: "policy.box.local.egress.allow", AllowPrivateLiterals: true}
	if sv.r.egressTest != nil {
		sv.r.egressTest(cfg)
	}
	return cfg, func() { f.Close() }, nil
}

// portOf is the port of a loopback URL the runner made.
func portOf(u string) int {
	parsed, err := url.Parse(u)
	if err != nil {
		return 0
	}
	_, p, _ := net.SplitHostPort(parsed.Host)
	n, _ := strconv.Atoi(p)
	return n
}
