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
	empty, profile := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(profile, "ir.yml"), []byte("schema: autonomy.ir.v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		empty:   "compile one: autonomy compile PROFILE --target local --dir " + empty,
		profile: profile + " holds a profile, not an installation: name the folder it was compiled into with --dir, or compile it: autonomy compile " + profile + " --target local --dir FOLDER",
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
