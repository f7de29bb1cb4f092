package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TempEnv returns env with the session's own TMPDIR when the preset asks for one (PrivateTmp):
// a new directory, private to the user, under env's TMPDIR (else the system's temporary
// directory), so it stays outside what the sandbox lets the agent write (/tmp and $TMPDIR are
// excluded). remove deletes it once the CLI and its process group are gone. Otherwise env is
// returned as it is. remove is never nil: on an error it does nothing.
func (p Preset) TempEnv(env []string) (out []string, remove func(), err error) {
	if !p.PrivateTmp {
		return env, func() {}, nil
	}
	return PrivateTemp(env, "the "+p.Name+" CLI", "autonomy-"+p.Name+"-")
}

// PrivateTemp returns env with a TMPDIR of its own: a new directory named prefix*, private to
// the user, under env's TMPDIR (else the system's temporary directory). what names its user in
// an error. remove deletes it; it is never nil: on an error it does nothing.
func PrivateTemp(env []string, what, prefix string) (out []string, remove func(), err error) {
	dir, err := os.MkdirTemp(TempParent(env), prefix)
	if err != nil {
		return nil, func() {}, fmt.Errorf("cannot make the temporary directory of %s: %w", what, err)
	}
	out = make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			out = append(out, kv)
		}
	}
	return append(out, "TMPDIR="+dir), func() { _ = os.RemoveAll(dir) }, nil
}

// TempParent is where PrivateTemp makes its directory for env: env's TMPDIR when it is an
// absolute path (the last one wins, as for exec), else the system's temporary directory.
func TempParent(env []string) string {
	parent := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			parent = v
		}
	}
	if !filepath.IsAbs(parent) {
		parent = os.TempDir()
	}
	return parent
}
