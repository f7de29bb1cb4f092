package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/agentcli"
	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/egress"
	"github.com/autonomyhq/autonomy/internal/gitremote"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
)

// Check is one thing autonomy doctor looked at.
type Check struct {
	// Name says what was checked, e.g. "agent codex".
	Name string
	// OK is false when something must be fixed before sessions can run.
	OK bool
	// Detail says what was found; Fix what to do about it when not OK, or, with OK, what to do
	// for a part of the fleet that sessions do not need to run (a note: the code flow's GitHub).
	Detail, Fix string
}

// trialKey is the placeholder model key the quickstart and init's next steps export beside the
// scripted model's URL (autonomy dev model): with the provider's own URL it is a mistake.
const trialKey = "trial"

// trialDetail and trialFix are doctor's finding on the trial key without its URL, which a
// launch refuses with (trialWithoutURL).
func trialDetail(p agent.Preset) string {
	return p.CredentialEnv + "=" + trialKey + " is the scripted model's placeholder, and " + p.BaseURLEnv + " is unset: sessions would send it to the provider itself"
}

const trialFix = "export $(cat model.env) with the file autonomy dev model --env-file model.env wrote (it exists once the model runs), or export your model's key"

// trialWithoutURL is doctor's finding, with its fix, when env holds the trial key as the
// credential of one of ps without that API's base URL: a session would send the placeholder to
// the provider itself, and its agent fail after minutes of retries saying only "exit status 1".
// "" when not.
func trialWithoutURL(env []string, ps []agent.Preset) string {
	for _, p := range ps {
		if sessionenv.Lookup(env, p.CredentialEnv) == trialKey && sessionenv.Lookup(env, p.BaseURLEnv) == "" {
			return trialDetail(p) + " (" + trialFix + "; autonomy doctor checks it)"
		}
	}
	return ""
}

// Doctor checks that the installation in dir can run its sessions with the environment env: the
// installation and its store, git, and for the agent preset its skills run with, the CLI at its
// pinned version, the sandbox's helpers and the model credential.
func Doctor(ctx context.Context, dir string, env []string) []Check {
	var out []Check
	in, err := Open(dir)
	if err != nil {
		if errors.Is(err, ErrNotInstalled) {
			abs, _ := filepath.Abs(dir)
			return append(out, Check{Name: "installation", Detail: "none in " + dir, Fix: notInstalledFix(abs, dir)})
		}
		return append(out, Check{Name: "installation", Detail: err.Error(), Fix: "compile it again"})
	}
	out = append(out, Check{Name: "installation", OK: true, Detail: fmt.Sprintf("%s (%d actors)", in.Dir, len(in.Runner.Actors))})
	r, err := New(dir, Options{Env: env})
	if err != nil {
		out = append(out, Check{Name: "store", Detail: err.Error(), Fix: "make " + in.Path(StateDir) + " writable, or move the broken database aside"})
	} else {
		err := r.Store.Check(ctx)
		r.Close()
		if err != nil {
			out = append(out, Check{Name: "store", Detail: err.Error(), Fix: "move the database in " + in.Path(StateDir) + " aside and run doctor again"})
		} else {
			out = append(out, Check{Name: "store", OK: true, Detail: in.Path(StateDir)})
		}
	}
	out = append(out, program(env, "git", "git", "", "install git (e.g. apt-get install git)"))
	if needs := committer(in) != nil; needs || workflows(in) {
		if c, ok := firstCommit(ctx, in.Dir, env, needs); ok {
			out = append(out, c)
		}
	}
	out = append(out, selfCheck())
	if cfg := committer(in); cfg != nil {
		// With what a session of it receives of this environment (its git reads no other).
		var senv []string
		for _, kv := range env {
			if k, _, _ := strings.Cut(kv, "="); allowed(k, cfg) {
				senv = append(senv, kv)
			}
		}
		if c, ok := gitIdentity(ctx, in.Dir, env, senv); ok {
			out = append(out, c)
		}
	}
	if in.Runner.CodeHost == "github" && proposes(in) {
		out = append(out, githubCodeHost(in, env))
	}
	if hasGitHubRemote(ctx, in.Dir) {
		out = append(out, program(env, "gh", "gh", "", "install the GitHub CLI (https://cli.github.com): the skills of a fleet on GitHub call gh; give sessions its token with policy.box.local.env: [GH_TOKEN]"))
	}

	// The presets the skills run with, each checked once.
	presets := map[string][]string{}
	custom := false                  // an actor runs your own agent command, which runs in the network sandbox too
	scripts := map[string][]string{} // a script behavior's missing interpreter: the actors it stops
	var scriptOrder []string
	tried := map[string]error{} // each way a script runs (its #! line, else its extension), tried once
	for _, name := range in.Runner.Actors {
		cfg, err := in.Actor(name)
		if err != nil {
			out = append(out, Check{Name: "actor " + name, Detail: err.Error(), Fix: "compile again"})
			continue
		}
		if c := cfg.Command; c != nil && c.Box && c.Preset != "" {
			presets[c.Package] = append(presets[c.Package], name)
		} else if c != nil && c.Box {
			custom = true
		} else if c != nil && c.Script != nil {
			key := strings.Join(c.Script.Shebang, "\x00") + "\x01" + c.Script.Ext
			err, done := tried[key]
			if !done {
				_, err = c.Script.Argv(in.Path(cfg.Behavior), func(p string) (string, error) {
					if filepath.IsAbs(p) { // an interpreter the #! line names by its path
						return exec.LookPath(p)
					}
					return lookPath(env, p)
				}, sessionenv.NodeVersion)
				tried[key] = err
			}
			if err != nil {
				if _, seen := scripts[err.Error()]; !seen {
					scriptOrder = append(scriptOrder, err.Error())
				}
				scripts[err.Error()] = append(scripts[err.Error()], name)
			}
		}
	}
	// A script whose interpreter is missing is refused at launch: said here, once per cause.
	for _, why := range scriptOrder {
		names := scripts[why]
		detail, fix, _ := strings.Cut(why, ": ")
		if fix == "" {
			fix = "install an interpreter for it, or give the script a #! line"
		}
		out = append(out, Check{Name: "script interpreter", Detail: fmt.Sprintf("%s (the behavior of %s)", detail, strings.Join(names, ", ")), Fix: fix})
	}
	if over := sessionenv.Lookup(env, AgentEnv); over != "" {
		out = append(out, Check{Name: "agent", OK: true, Detail: AgentEnv + " overrides the presets: " + over})
		return out
	}
	specs := make([]string, 0, len(presets))
	for s := range presets {
		specs = append(specs, s)
	}
	sort.Strings(specs)
	// On Linux a preset's session, and your own agent command's, runs in the network sandbox
	// behind its model proxy (egress_unix.go), made with the system's bwrap and socat whatever a
	// CLI bundles for its own sandbox: those programs are checked once, as the network sandbox's,
	// saying which presets' sandboxes run them too.
	netbox := (len(specs) > 0 || custom) && runtime.GOOS == "linux"
	alsoBy := map[string][]sandboxUser{} // each network sandbox program: the presets whose own sandboxes run it too
	for _, spec := range specs {
		cfg, _ := in.Actor(presets[spec][0])
		p, ok := agent.Lookup(cfg.Command.Preset)
		if !ok {
			out = append(out, Check{Name: "agent " + cfg.Command.Preset, Detail: "unknown preset", Fix: "compile again with this autonomy"})
			continue
		}
		version := strings.TrimPrefix(spec, p.Package+"@")
		name := "agent " + p.Name
		fix := "make agent-install (from a clone of autonomy: into " + cacheDir(env) + "), or npm install --global " + spec
		c := program(env, name, p.Bin, version, fix)
		if _, err := lookPath(env, p.Bin); err != nil {
			if cached := presetFromCache(env, cfg.Command); cached != "" {
				c = programAt(name, cached, version, fix)
				c.Detail += " (from the agent cache: " + p.Bin + " is not on PATH)"
			}
		}
		c.Detail += " (runs " + strings.Join(presets[spec], ", ") + ")"
		out = append(out, c)
		for _, h := range p.Helpers {
			if netbox && slices.Contains(egress.Helpers, h.Program) {
				alsoBy[h.Program] = append(alsoBy[h.Program], sandboxUser{p.Name, h.Bundled})
				continue
			}
			hc := program(env, "sandbox "+h.Program, h.Program, "", "install "+h.Package+" (e.g. apt-get install "+h.Package+"): "+p.Name+"'s sandbox needs it")
			if h.Bundled && !hc.OK {
				hc.OK, hc.Detail, hc.Fix = true, "not on PATH: "+p.Name+" uses the "+h.Package+" it bundles", ""
			}
			out = append(out, hc)
		}
		if v := sessionenv.Lookup(env, p.CredentialEnv); v == "" && sessionenv.Lookup(env, LoginEnv) == "1" {
			// A note: the operator chose it.
			out = append(out, Check{Name: "credential " + p.CredentialEnv, OK: true, Detail: "not set, and " + LoginEnv + "=1: sessions run " + p.Bin + " with its own login, without the model proxy, budget, transcript or network sandbox", Fix: "export " + p.CredentialEnv + "=… to run them behind the model proxy"})
		} else if v == "" {
			out = append(out, Check{Name: "credential " + p.CredentialEnv, Detail: "not set: launches are refused", Fix: "export " + p.CredentialEnv + "=… (the key of your model, or of your model proxy, with " + p.BaseURLEnv + " its URL), or set " + LoginEnv + "=1 to run " + p.Bin + " with its own login, without the model proxy"})
		} else if u := sessionenv.Lookup(env, p.BaseURLEnv); u != "" {
			c := Check{Name: "credential " + p.CredentialEnv, OK: true, Detail: "set; the model proxy is " + p.BaseURLEnv + "=" + redactURL(u)}
			if why := loopbackDown(u); why != "" {
				// The scripted model stopped, its URL still exported: sessions would fail
				// half a minute in, each, on a refused connection.
				c.OK, c.Detail = false, c.Detail+", but "+why
				c.Fix = "start the model again (autonomy dev model --addr 127.0.0.1:0 --env-file model.env, then export $(cat model.env)), or export " + p.BaseURLEnv + " as the URL of a model that is up"
			}
			out = append(out, c)
		} else if v == trialKey {
			// The quickstart's placeholder with the provider's own URL: every request would go
			// to the provider with it and fail, retried until the session is cancelled.
			out = append(out, Check{Name: "credential " + p.CredentialEnv, Detail: trialDetail(p), Fix: trialFix})
		} else {
			out = append(out, Check{Name: "credential " + p.CredentialEnv, OK: true, Detail: "set"})
		}
	}
	if netbox {
		for _, h := range egress.Helpers {
			out = append(out, networkSandboxHelper(env, h, alsoBy[h]))
		}
	}
	return out
}

// networkSandboxHelper checks h, a program of the network sandbox, on env's PATH: one line, which
// also names the presets whose own sandboxes run it (users).
func networkSandboxHelper(env []string, h string, users []sandboxUser) Check {
	pkg := map[string]string{"bwrap": "bubblewrap"}[h]
	if pkg == "" {
		pkg = h
	}
	fix := "install " + pkg + " (e.g. apt-get install bubblewrap socat): an agent's session runs in a network sandbox made with bwrap and socat (docs/local.md#egress)"
	c := program(env, "network sandbox "+h, h, "", fix)
	var all, need, bundle []string
	for _, u := range users {
		all = append(all, u.preset)
		if u.bundled {
			bundle = append(bundle, u.preset)
		} else {
			need = append(need, u.preset)
		}
	}
	switch {
	case c.OK && len(all) > 0:
		c.Detail += " (" + sandboxesOf(all) + " " + plural(all, "runs", "run") + " it too)"
	case !c.OK:
		if len(need) > 0 {
			c.Detail += " (" + sandboxesOf(need) + " " + plural(need, "needs", "need") + " it too)"
		}
		if len(bundle) > 0 {
			c.Fix += "; " + strings.Join(bundle, " and ") + " " + plural(bundle, "bundles", "bundle") + " a " + pkg + " for " + plural(bundle, "its", "their") + " own sandbox, but the network sandbox needs the system's"
		}
	}
	return c
}

// sandboxUser is a preset whose own sandbox runs a program of the network sandbox; bundled: the
// preset falls back to a copy of its own, which the network sandbox does not use.
type sandboxUser struct {
	preset  string
	bundled bool
}

// sandboxesOf names the own sandboxes of the presets names: "codex's own sandbox", "codex's and
// claude's own sandboxes".
func sandboxesOf(names []string) string {
	return strings.Join(names, "'s and ") + "'s own " + plural(names, "sandbox", "sandboxes")
}

// plural is one when names has one element, else many.
func plural(names []string, one, many string) string {
	if len(names) == 1 {
		return one
	}
	return many
}

// program checks that bin is on env's PATH and, when version is given, reports that version.
func program(env []string, name, bin, version, fix string) Check {
	path, err := lookPath(env, bin)
	if err != nil {
		return Check{Name: name, Detail: bin + " is not on PATH", Fix: fix}
	}
	if version == "" {
		return Check{Name: name, OK: true, Detail: path}
	}
	return programAt(name, path, version, fix)
}

// programAt checks that the program at path reports version.
func programAt(name, path, version, fix string) Check {
	got, err := agentcli.Version(path)
	if err != nil {
		return Check{Name: name, Detail: err.Error(), Fix: fix}
	}
	if got != version {
		return Check{Name: name, Detail: fmt.Sprintf("%s is version %s, the installation is pinned to %s", path, got, version), Fix: fix}
	}
	return Check{Name: name, OK: true, Detail: path + " " + got}
}

// selfCheck says how sessions find autonomy: the runner puts the binary that runs it first on
// every session's PATH (an orchestrator's autonomy runner launch), so nothing is to install.
func selfCheck() Check {
	exe, err := os.Executable()
	if err != nil {
		return Check{Name: "autonomy", Detail: "cannot find this binary: " + err.Error(), Fix: "run autonomy by its full path"}
	}
	return Check{Name: "autonomy", OK: true, Detail: exe + ": the runner puts the binary that runs it first on every session's PATH"}
}

// hasGitHubRemote reports whether the repository in dir has a remote on GitHub: its fleet's skills
// call gh. A directory that is not a repository has none.
func hasGitHubRemote(ctx context.Context, dir string) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "config", "--get-regexp", `^remote\..*\.url$`)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		// remote.NAME.url URL
		if _, u, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			if _, ok := gitremote.GitHubRepo(u); ok {
				return true
			}
		}
	}
	return false
}

// redactURL hides the password or token a URL may carry in its user info (https://user:key@host):
// doctor's output is pasted into issues and chats.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(not a URL)"
	}
	if u.User == nil {
		return s
	}
	u.User = url.User("REDACTED")
	return u.Redacted()
}

// proposes says whether an actor of the installation holds code:propose (one whose config
// cannot be read counts: doctor does not hide a check behind an error).
func proposes(in *Install) bool {
	for _, a := range in.Runner.Actors {
		if cfg, err := in.Actor(a); err != nil || holds(cfg, "code:propose") {
			return true
		}
	}
	return false
}

// workflows says whether an actor of the installation runs a workflow playbook (whose steps may
// read the repository's history).
func workflows(in *Install) bool {
	for _, a := range in.Runner.Actors {
		if cfg, err := in.Actor(a); err == nil && cfg.Workflow {
			return true
		}
	}
	return false
}

// firstCommit says when the git repository dir is in has no commit yet: a worktree (an isolated
// session, the code flow) starts from one, and a playbook reading the history finds none (newc9:
// doctor said nothing, and the launch failed). A fix when worktrees need it, a note otherwise.
// ok is false outside a repository, or without git.
func firstCommit(ctx context.Context, dir string, env []string, worktrees bool) (c Check, ok bool) {
	git, err := lookPath(env, "git")
	if err != nil {
		return Check{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, git, "-C", dir, "rev-parse", "--show-toplevel")
	cmd.Env = env
	top, err := cmd.Output()
	if err != nil {
		return Check{}, false // not in a repository
	}
	root := strings.TrimSpace(string(top))
	cmd = exec.CommandContext(ctx, git, "-C", dir, "rev-parse", "--quiet", "--verify", "HEAD^{commit}")
	cmd.Env = env
	if err := cmd.Run(); err != nil {
		return Check{Name: "git repository", OK: !worktrees, Detail: cliout.TerminalSafe(root) + " has no commit yet",
			Fix: `commit once (git commit --allow-empty -m "first commit", with your identity set: git config --global user.name "Your Name" && git config --global user.email you@example.com): a session's worktree, the code flow and a playbook reading the history start from a commit`}, true
	}
	return Check{Name: "git repository", OK: true, Detail: cliout.TerminalSafe(root)}, true
}

// committer is an actor of the installation whose sessions commit (it proposes, or works in a
// worktree of its own, whose work is saved on its branch as commits), or nil.
func committer(in *Install) *ActorConfig {
	for _, a := range in.Runner.Actors {
		if cfg, err := in.Actor(a); err == nil && (holds(cfg, "code:propose") || cfg.Workspace == "isolated") {
			return cfg
		}
	}
	return nil
}

// gitIdentity checks that git can name who authors and commits in dir with senv, what a
// session receives of the runner's environment (its HOME's configuration, not EMAIL nor a
// GIT_COMMITTER_* the shell exported): without it an agent's commit fails, and its work is not
// proposed. env finds git. ok is false when git is not there to ask (its own check says so).
func gitIdentity(ctx context.Context, dir string, env, senv []string) (c Check, ok bool) {
	git, err := lookPath(env, "git")
	if err != nil {
		return Check{}, false
	}
	var ident string
	for _, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		cmd := exec.CommandContext(ctx, git, "-C", dir, "var", v)
		cmd.Env = senv
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil {
			detail := strings.TrimSpace(stderr.String())
			if i := strings.LastIndex(detail, "\n"); i >= 0 {
				detail = detail[i+1:] // git's last line: "fatal: unable to auto-detect email address …"
			}
			return Check{Name: "git identity", Detail: detail,
				Fix: `git config --global user.name "Your Name" && git config --global user.email you@example.com: the agents commit their work as this identity, and a commit without one fails (nothing is proposed)`}, true
		}
		ident = strings.TrimSpace(string(stdout))
	}
	if i := strings.LastIndex(ident, "> "); i >= 0 {
		ident = ident[:i+1] // without the time
	}
	return Check{Name: "git identity", OK: true, Detail: cliout.TerminalSafe(ident)}, true
}

// loopbackDown says why nothing serves the model URL u, when it is on this machine (a scripted
// model, a proxy of one's own) and no connection to it opens: "" when one does, or when u is
// elsewhere (doctor does not reach out to a provider).
func loopbackDown(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Host == "" {
		return ""
	}
	host := parsed.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return ""
	}
	port := parsed.Port()
	switch {
	case port != "":
	case parsed.Scheme == "https":
		port = "443"
	default:
		port = "80"
	}
	addr := net.JoinHostPort(host, port)
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "nothing answers at " + addr + " (" + err.Error() + ")"
	}
	conn.Close()
	return ""
}

// githubCodeHost checks what the code flow of codeHost: github needs of the runner, as it finds
// them (flow.github), without pinning anything: the repository its proposals go to and the
// runner's own GitHub token. Without either, a proposer's session ends done and its proposal
// goes nowhere; sessions run, so it is a note (OK, with a Fix).
func githubCodeHost(in *Install, env []string) Check {
	// Sessions run without it: a note, not a fix.
	c := Check{Name: "code host github", OK: true}
	repo := ""
	if ev := in.Runner.Events; ev != nil {
		repo = ev.Repo
	}
	if repo == "" {
		repo = sessionenv.Lookup(env, "GITHUB_REPOSITORY")
	}
	if repo == "" {
		repo = originRepo(in.Dir)
	}
	if !repoName().MatchString(repo) {
		c.Detail = "cannot tell which GitHub repository proposals go to: sessions run, and what an actor proposes goes nowhere"
		c.Fix = "add the origin remote (git remote add origin https://github.com/OWNER/NAME.git), or set policy.box.local.events.repo or GITHUB_REPOSITORY to OWNER/NAME; or give the profile codeHost: local-git, whose proposals merge in this repository"
		return c
	}
	if runnerToken(env) == "" {
		c.Detail = repo + ", but the runner holds no GitHub token to open its pull requests with: sessions run, and what an actor proposes goes nowhere"
		c.Fix = "run the runner with GH_TOKEN (or GITHUB_TOKEN) set, e.g. GH_TOKEN=$(gh auth token); no session receives it"
		return c
	}
	c.Detail = repo + ", with the runner's GitHub token"
	return c
}
