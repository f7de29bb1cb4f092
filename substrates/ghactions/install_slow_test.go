package ghactions

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/buildinfo"
)

// installProofEnv gates TestInstallStep, which builds autonomy three times (a minute or more):
// .ci/run sets it and runs the test on its own.
const installProofEnv = "AUTONOMY_TEST_INSTALL"

// treeFiles lists this module's files as git sees them (tracked, or untracked and not
// ignored), sorted, and the directory they are relative to.
func treeFiles(t *testing.T) (dir string, names []string) {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git: %v", err)
	}
	dir = strings.TrimSpace(string(root))
	list, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, n := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if fi, err := os.Lstat(filepath.Join(dir, n)); err == nil && fi.Mode().IsRegular() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return dir, names
}

// gitRun runs git in dir with a fixed identity, failing the test on an error.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// sourceRepo commits this module's working tree, as git sees it, to a new bare repository (a
// git server the install step fetches from over file://) and returns its URL, the commit, and a
// checkout of it.
func sourceRepo(t *testing.T) (url, commit, checkout string) {
	t.Helper()
	dir, names := treeFiles(t)
	checkout = t.TempDir()
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(filepath.Join(dir, n))
		dst := filepath.Join(checkout, n)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, checkout, "init", "--quiet")
	gitRun(t, checkout, "add", "-A")
	gitRun(t, checkout, "commit", "--quiet", "-m", "the tree under test")
	commit = gitRun(t, checkout, "rev-parse", "HEAD")
	bare := filepath.Join(t.TempDir(), "autonomy.git")
	gitRun(t, checkout, "clone", "--quiet", "--bare", checkout, bare)
	return "file://" + filepath.ToSlash(bare), commit, checkout
}

// moduleProxy writes a file-based GOPROXY serving this module (its working tree, as git sees
// it) at version, and returns the proxy URL and the module zip's h1: checksum, computed here
// as go.sum defines it (sha256 of the sorted "sha256  name" lines of every file).
func moduleProxy(t *testing.T, version string) (proxy, sum string) {
	t.Helper()
	dir, names := treeFiles(t)
	prefix := ModulePath + "@" + version + "/"
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

// offlineGo is the environment of a go command that reaches no network: modules come from
// proxy (when not "") and else from this machine's module cache, itself laid out as a proxy.
func offlineGo(t *testing.T, proxy string) []string {
	t.Helper()
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	p := "file://" + filepath.ToSlash(strings.TrimSpace(string(gomodcache))) + "/cache/download"
	if proxy != "" {
		p = proxy + "," + p
	}
	return []string{"GOPROXY=" + p, "GOMODCACHE=" + filepath.Join(t.TempDir(), "mod"), "GOFLAGS=-modcacherw", "GOSUMDB=off", "GOTOOLCHAIN=local"}
}

// runInstall runs the install step as the runner would (bash -eo pipefail), with Go offline
// (offlineGo).
func runInstall(t *testing.T, s step, proxy string) (runnerTemp, githubEnv, output string, err error) {
	t.Helper()
	runnerTemp = t.TempDir()
	githubEnv = filepath.Join(runnerTemp, "github_env")
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s.Run)
	cmd.Env = append(append(os.Environ(), "RUNNER_TEMP="+runnerTemp, "GITHUB_ENV="+githubEnv), offlineGo(t, proxy)...)
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	b, err := cmd.CombinedOutput()
	return runnerTemp, githubEnv, string(b), err
}

// installed is the autonomy the step installed (AUTONOMY_BIN, from GITHUB_ENV) and what its
// `autonomy version` prints.
func installed(t *testing.T, githubEnv string) (bin, version string) {
	t.Helper()
	data, err := os.ReadFile(githubEnv)
	if err != nil {
		t.Fatal(err)
	}
	bin, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "AUTONOMY_BIN=")
	if !ok {
		t.Fatalf("GITHUB_ENV holds %q, want AUTONOMY_BIN=…", data)
	}
	v, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, v)
	}
	return bin, string(v)
}

// refused checks that the step failed, saying want, and installed nothing.
func refused(t *testing.T, temp, githubEnv, out string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("installed anyway:\n%s", out)
	}
	if !strings.Contains(out, want) {
		t.Errorf("the refusal does not say %q:\n%s", want, out)
	}
	if _, err := os.Stat(filepath.Join(temp, "autonomy-bin", "autonomy")); err == nil {
		t.Error("a binary was installed anyway")
	}
	if data, _ := os.ReadFile(githubEnv); len(data) > 0 {
		t.Errorf("AUTONOMY_BIN was exported: %s", data)
	}
}

// TestInstallStep runs the trusted jobs' install step, read from a compiled workflow, for each
// way it installs autonomy: from a git server holding the compiling commit, from a release
// served over HTTP, and from a module proxy. Each installs exactly the autonomy pinned (its
// `autonomy version` names the commit, the release or the module version), and refuses one
// that is not.
func TestInstallStep(t *testing.T) {
	if os.Getenv(installProofEnv) != "1" {
		t.Skipf("the install proof builds autonomy three times: set %s=1 to run it (.ci/run does)", installProofEnv)
	}
	if runtime.GOOS != "linux" {
		t.Skip("the install step runs on GitHub's linux runners")
	}
	for _, tool := range []string{"git", "jq", "curl", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (GitHub's runners have it)", tool)
		}
	}
	repo, commit, checkout := sourceRepo(t)

	t.Run("source: the compiling commit", func(t *testing.T) {
		s, _ := installStepOf(t, ToolFor(infoAt(commit)), "{ autonomy: { repository: \""+repo+"\" } }")
		_, genv, out, err := runInstall(t, s, "")
		if err != nil {
			t.Fatalf("install: %v\n%s", err, out)
		}
		if _, v := installed(t, genv); !strings.Contains(v, "(commit "+commit+", ") {
			t.Fatalf("the installed autonomy reports %q, want commit %s", v, commit)
		}
	})
	t.Run("source: a commit the repository does not have", func(t *testing.T) {
		s, _ := installStepOf(t, Tool{Repository: repo, Commit: commitA}, "")
		temp, genv, out, err := runInstall(t, s, "")
		refused(t, temp, genv, out, err, commitA)
	})
	t.Run("release", func(t *testing.T) { testReleaseInstall(t, checkout, commit) })
	t.Run("problem", func(t *testing.T) {
		s, _ := installStepOf(t, ToolFor(infoAt("")), "")
		temp, genv, out, err := runInstall(t, s, "")
		refused(t, temp, genv, out, err, "::error::this workflow cannot install the autonomy that compiled it: autonomy was built without a VCS stamp")
	})
	t.Run("module", testModuleInstall)
}

// testReleaseInstall builds a release binary of checkout (stamped as the release pipeline
// does), serves it with its checksums as a release over HTTP, and installs it.
func testReleaseInstall(t *testing.T, checkout, commit string) {
	const release = "v9.9.9-installtest"
	name := "autonomy_" + strings.TrimPrefix(release, "v") + "_linux_" + runtime.GOARCH
	web := t.TempDir()
	dir := filepath.Join(web, "releases", "download", release)
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=true", "-o", filepath.Join(dir, name),
		"-ldflags", buildinfo.StampRelease(release), "./cmd/autonomy")
	build.Dir = checkout
	build.Env = append(os.Environ(), offlineGo(t, "")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	bin, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	checksums := func(data []byte) {
		t.Helper()
		sums := fmt.Sprintf("%x  autonomy_other\n%x  %s\n", sha256.Sum256(nil), sha256.Sum256(data), name)
		if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(sums), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(web)))
	defer srv.Close()
	s, _ := installStepOf(t, Tool{Release: release, Repository: srv.URL, Commit: commit}, "")

	checksums(bin)
	_, genv, out, err := runInstall(t, s, "")
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if _, v := installed(t, genv); !strings.HasPrefix(v, "autonomy "+release+" (commit "+commit+", ") {
		t.Fatalf("the installed autonomy reports %q, want release %s of commit %s", v, release, commit)
	}

	checksums(append(bin, 0))
	temp, genv, out, err := runInstall(t, s, "")
	refused(t, temp, genv, out, err, name+": FAILED")

	// The right checksum, but not the compiling commit.
	checksums(bin)
	s, _ = installStepOf(t, Tool{Release: release, Repository: srv.URL, Commit: commitA}, "")
	temp, genv, out, err = runInstall(t, s, "")
	refused(t, temp, genv, out, err, "refusing to run it")
}

// testModuleInstall serves this module at a version from a file-based GOPROXY: the step
// installs exactly that autonomy, and refuses a module whose checksum is not the one compiled
// into the workflow.
func testModuleInstall(t *testing.T) {
	const version = "v0.0.1-installtest"
	proxy, sum := moduleProxy(t, version)
	s, _ := installStepOf(t, Tool{Module: ModulePath, Version: version, Sum: "h1:" + base64.StdEncoding.EncodeToString(make([]byte, 32))}, "")
	temp, genv, out, err := runInstall(t, s, proxy)
	refused(t, temp, genv, out, err, "refusing to run it")
	if !strings.Contains(out, sum) {
		t.Errorf("the refusal does not name the checksum found (%s):\n%s", sum, out)
	}

	s, _ = installStepOf(t, Tool{Module: ModulePath, Version: version, Sum: sum}, "")
	_, genv, out, err = runInstall(t, s, proxy)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if _, v := installed(t, genv); !strings.HasPrefix(v, "autonomy "+version+" (") {
		t.Fatalf("the installed autonomy reports %q, want version %s", v, version)
	}
}
