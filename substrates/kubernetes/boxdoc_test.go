package kubernetes

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/keydoc"
	"github.com/autonomyhq/autonomy/ir"
)

// TestBoxKeysAreDocumented: the keys docs/kubernetes.md's policy.box.kubernetes table lists are
// the keys ReadBox reads (its switch cases), which are boxKeys (the near-miss list); and each of
// them is read: a value of the wrong shape is refused, not carried as a key read by nothing.
func TestBoxKeysAreDocumented(t *testing.T) {
	md, err := os.ReadFile("../../docs/kubernetes.md")
	if err != nil {
		t.Fatal(err)
	}
	documented, err := keydoc.TableKeys(md, "## `policy.box.kubernetes`")
	if err != nil {
		t.Fatal(err)
	}
	read, err := keydoc.SwitchKeys(".", "ReadBox")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(documented)
	listed := slices.Sorted(slices.Values(boxKeys))
	if !slices.Equal(documented, read) || !slices.Equal(listed, read) {
		t.Errorf("policy.box.kubernetes keys\ndocumented in docs/kubernetes.md: %v\nread by ReadBox:                  %v\nboxKeys:                          %v", documented, read, listed)
	}
	mentioned, err := keydoc.RepoMentions("../..", "policy.box.kubernetes.")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range mentioned {
		if !slices.Contains(read, k) {
			t.Errorf("the docs name policy.box.kubernetes.%s, a key ReadBox does not read", k)
		}
	}
	for _, k := range documented {
		dir := t.TempDir()
		profile := "schema: autonomy.ir.v1\ntargets: [kubernetes]\nactors:\n  a:\n    behavior: run.sh\n    triggers: [{ dispatch: true }]\npolicy:\n  box:\n    kubernetes: { " + k + ": [[1]] }\n"
		if err := os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(profile), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		p, _, err := ir.Check(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, diags := ReadBox(p); !diags.HasErrors() || strings.Contains(diags.Error(), "read by nothing") {
			t.Errorf("%s: a value of the wrong shape is not refused: %v", k, diags)
		}
	}
}
