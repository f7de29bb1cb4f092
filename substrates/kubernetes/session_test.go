package kubernetes

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/autonomyhq/autonomy/internal/testbin"
)

// sessionScript is a script behavior: it refuses to run holding a credential, then writes the
// result MODE asks for.
const sessionScript = `#!/bin/sh
[ -z "$OPENAI_API_KEY" ] || { echo "a credential reached the session" >&2; exit 3; }
case "$MODE" in
ok) printf '{"verdict":"%s","session":"%s"}' "$VERDICT" "$AUTONOMY_SESSION" > "$AUTONOMY_RESULT" ;;
invalid) printf '{}' > "$AUTONOMY_RESULT" ;;
long) i=0; while [ $i -lt 300 ]; do printf '0123456789abcdef'; i=$((i+1)); done > "$AUTONOMY_RESULT" ;;
fail) exit 4 ;;
done) printf '{"status":"done","summary":"swept"}' > "$AUTONOMY_RESULT" ;;
gaveup) printf '{"status":"failed","summary":"nothing to sweep"}' > "$AUTONOMY_RESULT" ;;
esac
`

// podProcess is the session container of the Job the runner builds for a session of actor
// with params, run as a local process: the compiled PodTemplate's args and env, its install
// volume written from the compiled ConfigMaps into a temp dir, its termination message file a
// temp file. It returns the process's exit code and what it left in the termination file.
func podProcess(t *testing.T, objs []*unstructured.Unstructured, actor, id string, params map[string]string) (int, string) {
	t.Helper()
	var pt corev1.PodTemplate
	if err := object(objs, "PodTemplate", ObjectName(actor), &pt); err != nil {
		t.Fatal(err)
	}
	return runJobPod(t, objs, SessionJob("fleet-a", JobTemplate(&pt), Session{ID: id, Params: params}))
}

// runJobPod runs the session container of job's pod as a local process (see podProcess).
func runJobPod(t *testing.T, objs []*unstructured.Unstructured, job *batchv1.Job) (int, string) {
	t.Helper()
	return runJobPodIn(t, objs, job, nil, nil)
}

// runJobPodIn is runJobPod with extra entries of the image's environment, and the cluster's DNS:
// an env value naming a Service (a key of services) is that Service's address here.
func runJobPodIn(t *testing.T, objs []*unstructured.Unstructured, job *batchv1.Job, image []string, services map[string]string) (int, string) {
	t.Helper()
	tmp := t.TempDir()
	root, term := filepath.Join(tmp, "install"), filepath.Join(tmp, "termination-log")
	if err := os.WriteFile(term, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	mountVolume(t, objs, pod.Volumes, root)
	ctr := pod.Containers[0]
	if ctr.TerminationMessagePath != TerminationLog || ctr.VolumeMounts[0].MountPath != InstallDir {
		t.Fatalf("the container's termination path %q, mount %q", ctr.TerminationMessagePath, ctr.VolumeMounts[0].MountPath)
	}
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "OPENAI_API_KEY=sk-the-image-must-not-pass-this"}, image...)
	for _, e := range ctr.Env {
		v := e.Value
		if addr, ok := services[v]; ok {
			v = addr
		}
		if e.ValueFrom != nil {
			v = job.Name // the Job controller's job-name label
		}
		if rest, ok := strings.CutPrefix(v, InstallDir); ok && (rest == "" || rest[0] == '/') {
			v = root + rest
		}
		if v == TerminationLog {
			v = term
		}
		env = append(env, e.Name+"="+v)
	}
	if ctr.Args[0] != "autonomy" {
		t.Fatalf("the container runs %q", ctr.Args)
	}
	cmd := exec.Command(testbin.Path(t), ctr.Args[1:]...)
	cmd.Env, cmd.Dir = env, tmp
	out, err := cmd.CombinedOutput()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	msg, err := os.ReadFile(term)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exit %d, output:\n%s", code, out)
	return code, string(msg)
}

// mountVolume writes the projected ConfigMap items of the install volume under root.
func mountVolume(t *testing.T, objs []*unstructured.Unstructured, vols []corev1.Volume, root string) {
	t.Helper()
	for _, v := range vols {
		if v.Name != InstallVolume {
			continue
		}
		for _, src := range v.Projected.Sources {
			var cm corev1.ConfigMap
			if err := object(objs, "ConfigMap", src.ConfigMap.Name, &cm); err != nil {
				t.Fatal(err)
			}
			for _, it := range src.ConfigMap.Items {
				mode := *v.Projected.DefaultMode
				if it.Mode != nil {
					mode = *it.Mode
				}
				data, ok := cm.Data[it.Key]
				if !ok {
					data = string(cm.BinaryData[it.Key])
				}
				full := filepath.Join(root, filepath.FromSlash(it.Path))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(data), os.FileMode(mode)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// compiledSessionFleet compiles fleetProfile with sessionScript as its behavior.
func compiledSessionFleet(t *testing.T, ns string) []*unstructured.Unstructured {
	t.Helper()
	dir := writeFleet(t, strings.Replace(fleetProfile, "namespace: fleet-a", "namespace: "+ns, 1))
	if err := os.WriteFile(filepath.Join(dir, "scripts", "run.sh"), []byte(sessionScript), 0o755); err != nil {
		t.Fatal(err)
	}
	objs := compiledObjects(t, dir)
	return objs
}

// TestSessionEntryPointWritesTheCheckedResult: the compiled container command, run as a
// process, runs the script behavior with the params verbatim and no credential, and its
// termination message is a result the runner accepts; a missing, invalid, too long result or a
// failing behavior exits non-zero with the reason in the termination message.
func TestSessionEntryPointWritesTheCheckedResult(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a script behavior runs with sh")
	}
	objs := compiledSessionFleet(t, "fleet-a")
	fc, err := ReadFleetConfig(objs)
	if err != nil {
		t.Fatal(err)
	}
	schema := fc.Actors[1].Result
	if fc.Actors[1].Actor != "worker_1" || schema == "" {
		t.Fatalf("fleet config: %+v", fc.Actors[1])
	}
	verdict := "ok; $(touch /tmp/pwned) it's `id`"
	code, msg := podProcess(t, objs, "worker_1", "s-0123456789abcdef", map[string]string{"MODE": "ok", "VERDICT": verdict})
	if code != 0 {
		t.Fatalf("exit %d, termination message %q", code, msg)
	}
	want := `{"verdict":"` + verdict + `","session":"s-0123456789abcdef"}`
	if msg != want {
		t.Fatalf("termination message %q, want %q", msg, want)
	}
	a := readSchema(t, objs, schema)
	if why := checkResult(a, msg); why != "" {
		t.Fatalf("the runner refuses the result: %s", why)
	}
	for mode, reason := range map[string]string{
		"invalid": "does not satisfy the actor's result contract",
		"missing": "without a result",
		"long":    "4096 bytes or more",
		"fail":    "exit status 4",
	} {
		code, msg := podProcess(t, objs, "worker_1", "s-1", map[string]string{"MODE": mode})
		if code != 1 || !strings.Contains(msg, reason) || !strings.HasPrefix(msg, "autonomy session s-1: ") {
			t.Errorf("%s: exit %d, termination message %q, want exit 1 and %q", mode, code, msg, reason)
		}
		if checkResult(a, msg) == "" {
			t.Errorf("%s: the runner would take the reason %q for a result", mode, msg)
		}
	}
}

// TestScriptWithoutAResultIsNotDone: done is verified for a script that declares no result
// contract too: it has the default one (autonomy.result.v1), so exiting 0 without a result, or
// with one that says failed, fails the session; a valid one is its result.
func TestScriptWithoutAResultIsNotDone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a script behavior runs with sh")
	}
	objs := compiledSessionFleet(t, "fleet-a")
	for mode, reason := range map[string]string{
		"missing": "without a result: write one satisfying fleet/results/autonomy.result.v1.json to $AUTONOMY_RESULT",
		"gaveup":  "reported its work failed: nothing to sweep",
		"ok":      "does not satisfy the actor's result contract",
	} {
		code, msg := podProcess(t, objs, "boss", "s-2", map[string]string{"MODE": mode, "VERDICT": "ok"})
		if code != 1 || !strings.Contains(msg, reason) {
			t.Errorf("%s: exit %d, termination message %q, want exit 1 and %q", mode, code, msg, reason)
		}
	}
	code, msg := podProcess(t, objs, "boss", "s-3", map[string]string{"MODE": "done"})
	if code != 0 || msg != `{"status":"done","summary":"swept"}` {
		t.Errorf("a valid result: exit %d, termination message %q", code, msg)
	}
}

// readSchema is the installed result schema at path, as the runner holds it.
func readSchema(t *testing.T, objs []*unstructured.Unstructured, path string) any {
	t.Helper()
	var cm corev1.ConfigMap
	if err := object(objs, "ConfigMap", ConfigMapInstall, &cm); err != nil {
		t.Fatal(err)
	}
	s, err := decodeSchema([]byte(cm.Data[InstallKey(path)]))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSessionEntryPointNeedsItsPod: outside a session's container (no env) it exits 2 naming
// the missing variable, and writes nothing.
func TestSessionEntryPointNeedsItsPod(t *testing.T) {
	cmd := exec.Command(testbin.Path(t), SessionArgs[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "$"+EnvDir+" is not set") {
		t.Fatalf("err %v, output %s", err, out)
	}
	// The other machine entry points: a skill's MCP server, the model proxy's Deployment.
	for args, want := range map[string]string{
		strings.Join(MCPArgs, " "):            "$" + EnvDir + " is not set",
		strings.Join(ModelProxyArgs[1:], " "): "$" + EnvModelAPI + ` is "", not openai or anthropic`,
	} {
		cmd := exec.Command(testbin.Path(t), strings.Fields(args)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), want) {
			t.Errorf("%s: err %v, output %s", args, err, out)
		}
	}
}
