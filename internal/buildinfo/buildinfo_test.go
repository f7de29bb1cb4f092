package buildinfo

import (
	"runtime/debug"
	"testing"
	"time"
)

// TestFrom reads the VCS stamp and module fields the go command records, and the release stamp.
func TestFrom(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	bi := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/autonomyhq/autonomy", Version: "v0.0.0-20261126093554-0123456789ab"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: commit},
			{Key: "vcs.time", Value: "2026-11-26T09:35:54Z"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
	i := From(bi, "", "")
	if i.Commit != commit || i.Modified || !i.Time.Equal(time.Date(2026, 11, 26, 9, 35, 54, 0, time.UTC)) || i.Module != "github.com/autonomyhq/autonomy" {
		t.Errorf("From = %+v", i)
	}
	if got, want := i.String()+" "+i.Source(), "v0.0.0-20261126093554-0123456789ab commit "+commit; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	bi.Settings[3].Value = "true"
	if got, want := From(bi, "", "").Source(), "commit "+commit+" and uncommitted changes"; got != want {
		t.Errorf("dirty: got %q, want %q", got, want)
	}
	if got := From(bi, "v1.2.3", "").String(); got != "v1.2.3" {
		t.Errorf("release: got %q, want v1.2.3", got)
	}
	bi.Main.Version, bi.Settings = "(devel)", nil
	if i := From(bi, "", ""); i.String() != "devel" || i.Source() != "" {
		t.Errorf("unstamped: %q %q", i.String(), i.Source())
	}
	if i := From(nil, "", ""); i.String() != "devel" || i.Module != "" {
		t.Errorf("no build info: %+v", i)
	}
}

// TestFromCommitStamp: a build with no VCS stamp names the commit -ldflags gave it; a VCS
// stamp wins over it.
func TestFromCommitStamp(t *testing.T) {
	const stamped, claimed = "0123456789abcdef0123456789abcdef01234567", "89abcdef0123456789abcdef0123456789abcdef"
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/autonomyhq/autonomy", Version: "(devel)"}}
	if i := From(bi, "", claimed); i.Commit != claimed || i.Modified {
		t.Errorf("no VCS stamp: %+v, want commit %s", i, claimed)
	}
	bi.Settings = []debug.BuildSetting{{Key: "vcs.revision", Value: stamped}}
	if i := From(bi, "", claimed); i.Commit != stamped {
		t.Errorf("VCS stamp: %+v, want commit %s", i, stamped)
	}
}
