package local

import (
	"path/filepath"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// resultsDir holds the installed result contracts and inline result schemas.
const resultsDir = dataDir + "/results"

// DataDir is the folder behaviors are installed under.
func (Substrate) DataDir() string { return dataDir }

// SessionStore is where the runner records the installation dir's sessions (substrates.SessionStore):
// its database, and the folder of their results.
func (Substrate) SessionStore(dir string) (db, results string) {
	return DBPath(dir), filepath.Join(dir, filepath.FromSlash(StateDir), "results")
}

// Reserved lists what a local installation owns besides the behaviors and resources it copies:
// the files compile generates and the folders the runner writes at run time.
func (Substrate) Reserved(*ir.Profile) []substrates.Reserved {
	return []substrates.Reserved{
		{Path: LifecyclePath, What: "the lifecycle map"},
		{Path: HumanRequiredPath, What: "the approval gate's paths"},
		{Path: localDir, Dir: true, What: "the local runner's launcher configs, schedule and manifest"},
		{Path: resultsDir, Dir: true, What: "the installed result schemas"},
		{Path: StateDir, Dir: true, What: "the local runner's state: its database, logs and results"},
		{Path: WorktreeDir, Dir: true, What: "the git worktrees of isolated sessions"},
	}
}
