package ghactions

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
)

// moduleProxy writes a file-based GOPROXY serving this module (its working tree, as git sees
// it) at version, and returns the proxy URL and the module zip's h1: checksum, computed here
// as go.sum defines it (sha256 of the sorted "sha256  name" lines of every file).
func moduleProxy(t *testing.T, version string) (proxy, sum string) {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git: %v", err)
	}
	dir := strings.TrimSpace(string(root))
	list, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	prefix := ModulePath + "@" + version + "/"
	var names []string
	for _, n := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if fi, err := os.Lstat(filepath.Join(dir, n)); err == nil && fi.Mode().IsRegular() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	var summary strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(prefix + n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		fmt.Fprintf(&summary, "%x  %s\n", sha256.Sum256(data), prefix+n)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(summary.String()))
	sum = "h1:" + base64.StdEncoding.EncodeToString(h[:])

	pdir := t.TempDir()
	at := filepath.Join(pdir, filepath.FromSlash(ModulePath), "@v")
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-11-23T00:00:00Z"}`),
		version + ".mod":  gomod,
		version + ".zip":  zbuf.Bytes(),
	} {
		if err := os.MkdirAll(at, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return "file://" + filepath.ToSlash(pdir), sum
}

// installStep compiles a proposer with tool and returns the env and script of its propose
// job's install step, read from the workflow.
func installStep(t *testing.T, tool Tool) (map[string]string, string) {
	t.Helper()
	p, diags, err := ir.Check(profile(t, agent("code:propose", dispatchRef)))
	if err != nil || diags.HasErrors() {
		t.Fatalf("profile invalid: %v\n%s", err, diags)
	}
	out, err := Substrate{Tool: &tool}.Compile(resolve(p))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string
				Env  map[string]string
				Run  string
			}
		}
	}
	if err := yaml.Unmarshal([]byte(file(t, out, WorkflowPath("a"))), &wf); err != nil {
		t.Fatal(err)
	}
	for _, s := range wf.Jobs["propose"].Steps {
		if s.Name == installStepName {
			return s.Env, s.Run
		}
	}
	t.Fatal("the propose job has no install step")
	return nil, ""
}

// runInstall runs the install step as the runner would (bash -eo pipefail), with Go pointed at
// proxy and a module cache of its own.
func runInstall(t *testing.T, env map[string]string, script, proxy string) (runnerTemp, githubEnv, output string, err error) {
	t.Helper()
	runnerTemp = t.TempDir()
	githubEnv = filepath.Join(runnerTemp, "github_env")
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(),
		"RUNNER_TEMP="+runnerTemp, "GITHUB_ENV="+githubEnv,
		// The module from the test's proxy; its dependencies from this machine's cache, which
		// is itself laid out as a proxy.
		"GOPROXY="+proxy+",file://"+filepath.ToSlash(strings.TrimSpace(string(gomodcache)))+"/cache/download",
		"GOMODCACHE="+filepath.Join(t.TempDir(), "mod"), "GOFLAGS=-modcacherw", "GOSUMDB=off", "GOTOOLCHAIN=local")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	b, err := cmd.CombinedOutput()
	return runnerTemp, githubEnv, string(b), err
}

// TestInstallStep runs the trusted jobs' install step against a file-based GOPROXY serving
// this module at a version: it installs exactly that autonomy, and refuses a module whose
// checksum is not the one compiled into the workflow.
func TestInstallStep(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("jq is needed (GitHub's runners have it)")
	}
	const version = "v0.0.1-installtest"
	proxy, sum := moduleProxy(t, version)

	t.Run("wrong checksum", func(t *testing.T) {
		env, script := installStep(t, Tool{Module: ModulePath, Version: version, Sum: "h1:" + base64.StdEncoding.EncodeToString(make([]byte, 32))})
		temp, genv, out, err := runInstall(t, env, script, proxy)
		if err == nil {
			t.Fatalf("a module with another checksum was installed:\n%s", out)
		}
		if !strings.Contains(out, "refusing to run it") || !strings.Contains(out, sum) {
			t.Errorf("the refusal does not name the checksum found (%s):\n%s", sum, out)
		}
		if _, err := os.Stat(filepath.Join(temp, "autonomy-bin")); err == nil {
			t.Error("a binary was built anyway")
		}
		if data, _ := os.ReadFile(genv); len(data) > 0 {
			t.Errorf("AUTONOMY_BIN was exported: %s", data)
		}
	})
	t.Run("development build", func(t *testing.T) {
		env, script := installStep(t, Tool{Module: ModulePath, Version: "devel"})
		_, _, out, err := runInstall(t, env, script, proxy)
		if err == nil || !strings.Contains(out, "development build") {
			t.Fatalf("a workflow compiled by a development build installed something: %v\n%s", err, out)
		}
	})
	t.Run("the compiling version", func(t *testing.T) {
		env, script := installStep(t, Tool{Module: ModulePath, Version: version, Sum: sum})
		_, genv, out, err := runInstall(t, env, script, proxy)
		if err != nil {
			t.Fatalf("install: %v\n%s", err, out)
		}
		data, err := os.ReadFile(genv)
		if err != nil {
			t.Fatal(err)
		}
		bin, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "AUTONOMY_BIN=")
		if !ok {
			t.Fatalf("GITHUB_ENV holds %q, want AUTONOMY_BIN=…", data)
		}
		v, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil || !strings.Contains(string(v), "autonomy "+version+" ") {
			t.Fatalf("the installed autonomy reports %q (%v), want version %s", v, err, version)
		}
	})
}
