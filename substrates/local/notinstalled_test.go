package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotInstalledSaysWhereTheInstallationIs: a runner pointed at a folder with no installation
// says how to compile one with the flag compile has (--dir), and pointed at a profile's folder
// (the natural mistake: the profile is not where it was compiled to) says so.
func TestNotInstalledSaysWhereTheInstallationIs(t *testing.T) {
	empty, profile, initialized, installed := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	for _, f := range []string{filepath.Join(profile, "ir.yml"), filepath.Join(initialized, "autonomy", "ir.yml"), filepath.Join(installed, "autonomy", "ir.yml"), filepath.Join(installed, RunnerPath)} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("schema: autonomy.ir.v1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inProfile := filepath.Join(installed, "autonomy")
	docs := filepath.Join(installed, "docs", "guide")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		// run from a folder deeper in the installed repository: the installation above is named.
		docs:    docs + " is inside the installation " + installed + ": run from there, or pass --dir " + installed,
		empty:   "compile one: autonomy compile PROFILE --target local --dir " + empty,
		profile: profile + " holds a profile, not an installation: name the folder it was compiled into with --dir, or compile it: autonomy compile " + profile + " --target local --dir FOLDER",
		// init wrote ./autonomy and nothing was compiled yet: the command names it.
		initialized: "compile one: autonomy compile " + filepath.Join(initialized, "autonomy") + " --target local --dir " + initialized,
		// run from init's profile folder inside the installation: the folder above is it.
		inProfile: inProfile + " holds a profile, not an installation; the folder above it is one: --dir " + installed,
	} {
		_, err := Open(dir)
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want ErrNotInstalled saying %q", dir, err, want)
		}
		checks := Doctor(context.Background(), dir, nil)
		if len(checks) != 1 || checks[0].OK || checks[0].Fix != want {
			t.Errorf("Doctor(%s) = %+v, want its fix %q", dir, checks, want)
		}
	}
}
