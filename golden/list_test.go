package golden

import (
	"reflect"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/substrates"
)

// TestCompileListIsCompileWithoutTheBodies: for every golden profile and target, a Lister's
// CompileList names the files Compile renders (path, mode, header, in order) with the same
// warnings and blockers, and renders none of the workflows, configs and manifests (validate's
// Diagnose relies on it: it checks every target without building their bytes); Diagnose gives
// Compile's warnings.
func TestCompileListIsCompileWithoutTheBodies(t *testing.T) {
	listers := 0
	for _, tg := range targets(t) {
		lister, ok := tg.sub.(substrates.Lister)
		if !ok {
			continue
		}
		listers++
		t.Run(tg.dir, func(t *testing.T) {
			p, diags, err := ir.Check(tg.profile)
			if err != nil || diags.HasErrors() {
				t.Fatalf("%v\n%s", err, diags)
			}
			r, _ := playbook.Resolve(p)
			full, err := tg.sub.Compile(r)
			if err != nil {
				t.Fatal(err)
			}
			list, err := lister.CompileList(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Files) != len(full.Files) {
				t.Fatalf("%d files listed, %d compiled", len(list.Files), len(full.Files))
			}
			unrendered := 0
			for i, f := range list.Files {
				g := full.Files[i]
				if f.Path != g.Path || f.Mode != g.Mode || f.Header != g.Header {
					t.Errorf("listed %s %o %d, compiled %s %o %d", f.Path, f.Mode, f.Header, g.Path, g.Mode, g.Header)
				}
				if f.Data == nil {
					unrendered++
				} else if string(f.Data) != string(g.Data) {
					t.Errorf("%s: listed with other bytes than compiled", f.Path)
				}
			}
			if unrendered == 0 {
				t.Error("CompileList rendered every file")
			}
			if !reflect.DeepEqual(list.Warnings, full.Warnings) || !reflect.DeepEqual(list.Blockers, full.Blockers) {
				t.Errorf("listed warnings %v, blockers %v; compiled %v, %v", list.Warnings, list.Blockers, full.Warnings, full.Blockers)
			}
			out, err := substrates.Compile(tg.sub, r, tg.dir)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := substrates.Diagnose(tg.sub, r); err != nil || !reflect.DeepEqual(got, out.Warnings) {
				t.Errorf("Diagnose: %v, %v; Compile's warnings %v", got, err, out.Warnings)
			}
		})
	}
	if listers == 0 {
		t.Fatal("no golden target is a substrates.Lister")
	}
}
