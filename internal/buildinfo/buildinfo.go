// Package buildinfo says which autonomy is running: a release (its version stamped by the
// release pipeline), a module version (`go install module@version`, with the module zip's
// checksum), or a build from a git checkout (its commit, and whether the working tree had
// uncommitted changes). The gh-actions substrate pins what its trusted jobs install from it.
package buildinfo

import (
	"runtime/debug"
	"time"
)

// Release is the release version, set by the release pipeline (.goreleaser.yaml):
// -ldflags "-X github.com/autonomyhq/autonomy/internal/buildinfo.Release=v1.2.3". Empty in
// every other build.
var Release string

// Commit is the full commit SHA a build outside a git checkout (from a source archive, with no
// VCS stamp) was made from, set the same way: -X
// github.com/autonomyhq/autonomy/internal/buildinfo.Commit=SHA. A VCS stamp takes precedence.
var Commit string

// Info is what a binary knows about its own build.
type Info struct {
	// Module is the main module's path.
	Module string
	// Release is the release version stamped by the release pipeline ("" otherwise).
	Release string
	// Version and Sum are the module version and its zip's h1: checksum when the binary was
	// built by `go install module@version` (Sum is empty otherwise). Version may also be the
	// pseudo-version the go command derives from a checkout's commit, or "(devel)".
	Version, Sum string
	// Commit is the full git commit the binary was built from ("" without a VCS stamp: `go
	// run`, `go test`, -buildvcs=false, a build outside a git checkout); Time is its commit
	// time; Modified is set when the working tree had uncommitted changes.
	Commit   string
	Time     time.Time
	Modified bool
}

// Read returns the running binary's build information.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return From(bi, Release, Commit)
}

// From reads bi (nil when the binary has none) and the stamps set with -ldflags: the release
// and the commit of a build without a VCS stamp.
func From(bi *debug.BuildInfo, release, commit string) Info {
	i := Info{Release: release, Commit: commit}
	if bi == nil {
		return i
	}
	i.Module, i.Version, i.Sum = bi.Main.Path, bi.Main.Version, bi.Main.Sum
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value // the stamp, not what -ldflags claims
		case "vcs.time":
			i.Time, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	return i
}

// String is the version `autonomy version` prints: the release, else the module version (for
// a build from a checkout, the pseudo-version the go command derives from its commit), else
// "devel".
func (i Info) String() string {
	v := i.Release
	if v == "" {
		v = i.Version
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	return v
}

// Source names the commit the binary was built from ("commit SHA", with "and uncommitted
// changes" when its tree had some), or "" without a VCS stamp.
func (i Info) Source() string {
	if i.Commit == "" {
		return ""
	}
	if i.Modified {
		return "commit " + i.Commit + " and uncommitted changes"
	}
	return "commit " + i.Commit
}

// pkg is this package's import path, which -ldflags -X names.
const pkg = "github.com/autonomyhq/autonomy/internal/buildinfo"

// StampRelease is the -ldflags -X argument that stamps a build as release version.
func StampRelease(version string) string { return "-X " + pkg + ".Release=" + version }

// StampCommit is the -ldflags -X argument that makes a build with no VCS stamp name commit.
func StampCommit(commit string) string { return "-X " + pkg + ".Commit=" + commit }

// TestCommit is the commit the autonomy binaries the tests build name: built from a tree that
// may have uncommitted changes, or no VCS stamp, they would otherwise name nothing a
// gh-actions job could install, and compile would refuse to write (go build -buildvcs=false
// -ldflags=StampCommit(TestCommit)). No job fetches it: the tests play the install step.
const TestCommit = "0123456789abcdef0123456789abcdef01234567"
