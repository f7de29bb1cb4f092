package registry

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/substrates"
)

// TestReservedCoversGeneratedFiles keeps each substrate's Reserved list derived from what it
// really writes: every file its Compile generates (not a verbatim copy) for every bundled
// profile and the conformance probe is a reserved path or inside a reserved folder.
func TestReservedCoversGeneratedFiles(t *testing.T) {
	dirs, _ := filepath.Glob("../../profiles/*")
	dirs = append(dirs, "../../conformance/probe")
	for _, s := range All() {
		lay, ok := s.(substrates.Layout)
		if !ok {
			t.Errorf("%s does not declare its Layout", s.Name())
			continue
		}
		for _, dir := range dirs {
			p, diags, err := ir.Check(dir)
			if err != nil || diags.HasErrors() {
				t.Fatalf("%s: %v %s", dir, err, diags)
			}
			r, _ := playbook.Resolve(p)
			out, err := substrates.Compile(s, r, dir)
			if err != nil {
				t.Fatalf("%s %s: %v", s.Name(), dir, err)
			}
			reserved := append(substrates.WriterReserved(), lay.Reserved(p)...)
			for _, f := range out.Files {
				if f.Header == substrates.NoHeader {
					continue // a behavior or resource, copied verbatim
				}
				if !covered(f.Path, reserved) {
					t.Errorf("%s generates %s for %s, which its Reserved list does not cover", s.Name(), f.Path, dir)
				}
			}
		}
	}
}

func covered(p string, reserved []substrates.Reserved) bool {
	for _, r := range reserved {
		if p == r.Path || r.Dir && strings.HasPrefix(p, r.Path+"/") {
			return true
		}
	}
	return false
}
