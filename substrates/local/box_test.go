package local

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// compileBox compiles a one-actor profile whose policy.box.local is box (flow YAML).
func compileBox(t *testing.T, box string) (RunnerConfig, error) {
	t.Helper()
	p := writeBoxProfile(t, box)
	out, err := Substrate{}.Compile(resolve(p))
	if err != nil {
		return RunnerConfig{}, err
	}
	var rc RunnerConfig
	for _, f := range out.Files {
		if f.Path == RunnerPath {
			if err := json.Unmarshal(f.Data, &rc); err != nil {
				t.Fatal(err)
			}
			return rc, nil
		}
	}
	t.Fatalf("no %s in the output", RunnerPath)
	return rc, nil
}

// writeBoxProfile writes and checks a one-actor local profile with policy.box.local set to box.
func writeBoxProfile(t *testing.T, box string) *ir.Profile {
	t.Helper()
	dir := t.TempDir()
	yml := "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  a:\n    behavior: run.sh\n    triggers: [{ dispatch: true }]\npolicy:\n  box:\n    local: " + box + "\n"
	if err := os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("profile invalid: %v\n%s", err, diags)
	}
	return p
}

func TestBoxLogMaxBytes(t *testing.T) {
	t.Parallel()
	rc, err := compileBox(t, "{ overlap: false }")
	if err != nil || rc.LogMaxBytes != DefaultLogMaxBytes {
		t.Errorf("default: logMaxBytes %d, %v; want %d", rc.LogMaxBytes, err, DefaultLogMaxBytes)
	}
	if rc, err := compileBox(t, "{ logMaxBytes: 1048576 }"); err != nil || rc.LogMaxBytes != 1<<20 {
		t.Errorf("logMaxBytes: 1048576 gives %d, %v", rc.LogMaxBytes, err)
	}
	for _, c := range []struct{ box, want string }{
		{"{ logMaxBytes: 10MiB }", `ir.yml:9:27: policy.box.local.logMaxBytes must be a whole number`},
		{"{ logMaxBytes: 1.5 }", `ir.yml:9:27: policy.box.local.logMaxBytes must be a whole number`},
		{"{ logMaxBytes: 100 }", `ir.yml:9:27: policy.box.local.logMaxBytes is 100; it must be between 1024 and 1099511627776`},
		{"{ logMaxBytes: 2099511627776 }", `it must be between 1024 and 1099511627776`},
	} {
		_, err := compileBox(t, c.box)
		var diags ir.Diagnostics
		if !errors.As(err, &diags) || !strings.Contains(diags.Error(), c.want) {
			t.Errorf("%s:\n got: %v\nwant: %s", c.box, err, c.want)
		}
	}
	// A near miss is carried (policy.box is opaque governance), with a warning naming the key.
	p := writeBoxProfile(t, "{ logMaxByte: 1024 }")
	out, err := Substrate{}.Compile(resolve(p))
	if err != nil || !strings.Contains(out.Warnings.Error(), `ir.yml:9:14: warning: policy.box.local.logMaxByte`) || !strings.Contains(out.Warnings.Error(), `did you mean "logMaxBytes"`) {
		t.Errorf("logMaxByte: %v, warnings:\n%s", err, out.Warnings)
	}
}

func TestBoxSecrets(t *testing.T) {
	t.Parallel()
	if _, err := compileBox(t, "{ secrets: [INBOX_TOKEN, API_KEY] }"); err != nil {
		t.Errorf("good secrets: %v", err)
	}
	for _, c := range []struct{ box, want string }{
		{"{ secrets: [INBOX_TOKEN, bad-name] }", `ir.yml:9:37: policy.box.local.secrets: "bad-name" is not an environment variable name`},
		{"{ secrets: INBOX_TOKEN }", `ir.yml:9:23: policy.box.local.secrets must be a list of words`},
	} {
		_, err := compileBox(t, c.box)
		var diags ir.Diagnostics
		if !errors.As(err, &diags) || !strings.Contains(diags.Error(), c.want) {
			t.Errorf("%s:\n got: %v\nwant: %s", c.box, err, c.want)
		}
	}
}
