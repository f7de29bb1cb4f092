package gitws

import (
	"context"
	"os"
	"strconv"
	"strings"
)

// safeConfig is given to every git command. The repository's git directory is writable by the
// sandboxed agent (it commits), so a hook, a core.fsmonitor command or a signing program
// (gpg.program, with commit.gpgSign) it planted there must not be run by the runner, outside the
// sandbox, nor git commands in submodules it added; and a commit-graph file it wrote (which can
// state any parents for a commit) must not be believed: git reads the commits themselves.
var safeConfig = []string{
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "core.fsmonitor=false",
	"-c", "core.commitGraph=false",
	"-c", "commit.gpgSign=false",
	"-c", "submodule.recurse=false",
	// GIT_GRAFT_FILE=/dev/null (gitEnv) reads an empty graft file: git hints about grafts on
	// every command that reads commits, unless told not to.
	"-c", "advice.graftFileDeprecated=false",
}

// gitEnv is this process's environment without any GIT_ variable (a parent git's GIT_DIR would
// make git act on another repository; GIT_CONFIG_PARAMETERS, GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND
// and the like would make it run what they name), and with what makes git read the repository
// as its objects are, and run nothing anyone configured:
//   - GIT_NO_REPLACE_OBJECTS and GIT_GRAFT_FILE=/dev/null: a replace ref or a graft, which the
//     agent can plant in the git directory, would make every check read other commits and trees
//     than the ones the branch holds;
//   - GIT_CONFIG_GLOBAL=/dev/null, GIT_CONFIG_NOSYSTEM, GIT_ATTR_NOSYSTEM: no filter, driver,
//     alias or helper from the user's or the system's configuration (git-lfs's filter, above
//     all, which would read a committed .lfsconfig and contact the URL it names);
//     GIT_LFS_SKIP_SMUDGE as well, should git-lfs run anyway;
//   - GIT_TERMINAL_PROMPT=0: git must fail, not wait for a password on a terminal nobody watches;
//   - no GH_TOKEN or GITHUB_TOKEN: no git of the runner's needs the token in its environment (a
//     transfer to GitHub is handed it as one header, scoped to GitHub's server: transfer.go), and
//     the repository's configuration may name programs git runs (a filter, fsmonitor) that
//     would read it.
//
// The repository's own configuration (.git/config) is still read: the filters and merge drivers
// it defines are switched off per command by driverConfig.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "GIT_") && name != "GH_TOKEN" && name != "GITHUB_TOKEN" {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_GRAFT_FILE="+os.DevNull,
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_LFS_SKIP_SMUDGE=1",
	)
}

// writesFiles are the git commands the runner runs that read or write files of a working tree,
// or merge contents: the ones a filter (smudge, clean, process) or a merge driver named by a
// .gitattributes, committed by the agent, would run through.
var writesFiles = map[string]bool{
	"worktree": true, "merge": true, "merge-tree": true, "status": true, "checkout": true,
	"reset": true, "read-tree": true, "stash": true, "add": true, "commit": true,
}

// driverConfig is the environment that switches off, for one git command in dir, every filter
// and merge driver the repository's configuration defines: a filter's commands are emptied (git
// then copies the file as it is) and a merge driver is "false" (the path conflicts, and a person
// merges it). It is passed as GIT_CONFIG_COUNT/KEY/VALUE, which takes a driver name with any
// character. Nil when dir defines none, or git cannot tell (the command then fails or runs
// without them all the same: no global or system configuration is read).
func driverConfig(ctx context.Context, dir string, args []string) []string {
	if len(args) == 0 || !writesFiles[args[0]] {
		return nil
	}
	out, err := gitOnce(ctx, dir, []string{"config", "-z", "--name-only", "--get-regexp", `^(filter|merge)\.`})
	if err != nil {
		return nil
	}
	var keys, values []string
	seen := map[string]bool{}
	for _, name := range strings.Split(out, "\x00") {
		section, rest, ok := strings.Cut(name, ".")
		i := strings.LastIndexByte(rest, '.')
		if !ok || i <= 0 || seen[section+"."+rest[:i]] {
			continue
		}
		driver := section + "." + rest[:i]
		seen[driver] = true
		if section == "filter" {
			keys = append(keys, driver+".clean", driver+".smudge", driver+".process", driver+".required")
			values = append(values, "", "", "", "false")
		} else {
			keys = append(keys, driver+".driver")
			values = append(values, "false")
		}
	}
	if len(keys) == 0 {
		return nil
	}
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(keys))}
	for i := range keys {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+keys[i], "GIT_CONFIG_VALUE_"+n+"="+values[i])
	}
	return env
}
