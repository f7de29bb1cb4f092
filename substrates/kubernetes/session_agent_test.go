package kubernetes

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/testbin"
)

// skillProfile is a fleet with a skill (writer) whose capabilities are a scoped launch and
// tasks:converse, and a script it may not launch (pal). UPSTREAM and PRESET are filled in.
const skillProfile = `schema: autonomy.ir.v1
targets: [kubernetes]
actors:
  writer:
    behavior: skills/writer
    capabilities: [agent:launch@other, tasks:converse]
    triggers: [{ dispatch: true }]
    result: { schema: { type: object, required: [verdict], properties: { verdict: { type: string } }, additionalProperties: false } }
  other:
    behavior: scripts/run.sh
    triggers: [{ dispatch: true }]
  pal:
    behavior: scripts/run.sh
    triggers: [{ dispatch: true }]
policy:
  box:
    kubernetes: { namespace: fleet-s, agent: PRESET, model: MODEL, modelProxy: { secret: model-key, upstream: "UPSTREAM" } }
`

// modelSecret is the Secret the test's cluster holds: what the kubelet reads a secretKeyRef from.
var modelSecret = map[string]map[string]string{"model-key": {"OPENAI_API_KEY": "sk-real-openai", "ANTHROPIC_API_KEY": "sk-ant-real"}}

// compiledSkillFleet compiles skillProfile for preset, its proxy forwarding to upstream.
func compiledSkillFleet(t *testing.T, preset, model, upstream string) []*unstructured.Unstructured {
	t.Helper()
	dir := writeFleet(t, strings.NewReplacer("PRESET", preset, "MODEL", model, "UPSTREAM", upstream).Replace(skillProfile))
	skill := filepath.Join(dir, "skills", "writer", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: writer\ndescription: writes a verdict\n---\nWrite the verdict.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	objs := compiledObjects(t, dir)
	return objs
}

// startModelProxy runs the model proxy's container of the compiled Deployment as a local
// process: its args and env as compiled, the secretKeyRef read from modelSecret as the kubelet
// would, listening on a free loopback port instead of :8787. It returns the proxy's root URL.
func startModelProxy(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	var dep appsv1.Deployment
	if err := object(objs, "Deployment", ModelProxyName, &dep); err != nil {
		t.Fatal(err)
	}
	ctr := dep.Spec.Template.Spec.Containers[0]
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for _, e := range ctr.Env {
		v := e.Value
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			v = modelSecret[ref.SecretKeyRef.Name][ref.SecretKeyRef.Key]
		}
		if e.Name == EnvModelListen {
			v = "127.0.0.1:0"
		}
		env = append(env, e.Name+"="+v)
	}
	if ctr.Args[0] != "autonomy" {
		t.Fatalf("the proxy runs %q", ctr.Args)
	}
	cmd := exec.Command(testbin.Path(t), ctr.Args[1:]...)
	cmd.Env, cmd.Stderr = env, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(line, "model proxy listening on ")
	if err != nil || !ok {
		t.Fatalf("the proxy printed %q (%v)", line, err)
	}
	go func() { _, _ = bufio.NewReader(out).WriteTo(os.Stdout) }()
	return "http://" + strings.Fields(addr)[0]
}

// TestModelProxyEntryPointServesWithTheSecretsKey: the compiled Deployment's container, run as a
// process, forwards a request carrying the sessions' placeholder key (read from the compiled
// PodTemplate) with the Secret's key in its place, and refuses one carrying any other key.
func TestModelProxyEntryPointServesWithTheSecretsKey(t *testing.T) {
	model := modelfake.Start(modelfake.Turn{Text: "hello"})
	defer model.Close()
	objs := compiledSkillFleet(t, "codex", "gpt-5.5", model.URL())
	root := startModelProxy(t, objs)
	var pt corev1.PodTemplate
	if err := object(objs, "PodTemplate", ObjectName("writer"), &pt); err != nil {
		t.Fatal(err)
	}
	placeholder := ""
	for _, e := range pt.Template.Spec.Containers[0].Env {
		if e.Name == EnvModelKey {
			placeholder = e.Value
		}
		if strings.Contains(e.Value, "sk-real") || e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("the session's pod holds the credential: %+v", e)
		}
	}
	for key, want := range map[string]int{placeholder: 200, "sk-guess": 401} {
		req, _ := http.NewRequest("POST", root+"/openai/v1/responses", strings.NewReader(`{"model":"gpt-5.5","input":"hi","stream":false}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("key %q: status %d, want %d: %s", key, resp.StatusCode, want, body)
		}
	}
	reqs := model.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer sk-real-openai" {
		t.Fatalf("the model got %d requests, the first with %q; want one, with the Secret's key", len(reqs), firstAuth(reqs))
	}
}

func firstAuth(reqs []modelfake.Request) string {
	if len(reqs) == 0 {
		return ""
	}
	return reqs[0].Header.Get("Authorization")
}

// TestSkillSessionCodex and TestSkillSessionClaude: the compiled container command of a skill's
// session, run as a process with the real pinned agent CLI on the image's PATH against the
// scripted model through the fleet's model proxy (its compiled Deployment, run as a process, its
// Service's name resolving to it), is done only with the result the agent submitted, checked
// against the contract; the tools it may not use are refused (a code-host effect this target
// does not realize, a launch outside its agent:launch scope), and the model only ever sees the
// Secret's key while the pod holds a placeholder.
func TestSkillSessionCodex(t *testing.T)  { skillSession(t, "codex", "gpt-5.5") }
func TestSkillSessionClaude(t *testing.T) { skillSession(t, "claude", "claude-sonnet-4-5") }

func skillSession(t *testing.T, preset, modelName string) {
	if runtime.GOOS == "windows" {
		t.Skip("the image's agent CLIs run on Linux")
	}
	program := agentclitest.Require(t, preset)
	model := modelfake.Start(
		modelfake.Turn{Tool: "comment", Args: json.RawMessage(`{"item":"1","body":"Looks good."}`)},
		modelfake.Turn{Tool: "launch", Args: json.RawMessage(`{"actor":"pal"}`)},
		modelfake.Turn{Tool: "submit_result", Args: json.RawMessage(`{"status":"done","summary":"Wrote the verdict.","output":{"verdict":"ok; $(id) it's"}}`)},
		modelfake.Turn{JSON: json.RawMessage(`{"verdict":"final message"}`)},
	)
	defer model.Close()
	objs := compiledSkillFleet(t, preset, modelName, model.URL())
	root := startModelProxy(t, objs)
	var pt corev1.PodTemplate
	if err := object(objs, "PodTemplate", ObjectName("writer"), &pt); err != nil {
		t.Fatal(err)
	}
	job := SessionJob("fleet-s", JobTemplate(&pt), Session{ID: "s-00000000000000aa", Params: map[string]string{}})
	image := []string{"PATH=" + filepath.Dir(program) + string(os.PathListSeparator) + os.Getenv("PATH")}
	code, msg := runJobPodIn(t, objs, job, image, map[string]string{ModelProxyURL("fleet-s"): root})
	if err := model.Err(); err != nil {
		t.Errorf("the model: %v", err)
	}
	if code != 0 || msg != `{"verdict":"ok; $(id) it's"}` {
		t.Fatalf("exit %d, termination message %q; want exit 0 and the submitted output", code, msg)
	}
	if why := checkResult(readSchema(t, objs, resultsDir+"/writer.json"), msg); why != "" {
		t.Fatalf("the runner refuses the result: %s", why)
	}
	var outputs []string
	for _, r := range model.Scripted() {
		outputs = append(outputs, r.ToolOutputs...)
	}
	joined := strings.Join(outputs, "\n")
	for _, want := range []string{"not supported on the kubernetes target", `may not act on "pal"`, `"submitted":true`} {
		if !strings.Contains(joined, want) {
			t.Errorf("the model never read %q; tool outputs:\n%s", want, joined)
		}
	}
	for _, r := range model.Requests() {
		if r.API == "" {
			continue
		}
		if got := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key"); !strings.Contains(got, "-real") {
			t.Errorf("a model request carried %q, not the Secret's key", got)
		}
	}
}

// TestSkillSessionNeedsItsAgentInTheImage: a skill whose agent CLI is on no directory of the
// image's PATH (and in no agent cache) fails at once, naming the preset and how the image gets it.
func TestSkillSessionNeedsItsAgentInTheImage(t *testing.T) {
	objs := compiledSkillFleet(t, "codex", "gpt-5.5", "http://127.0.0.1:9")
	var pt corev1.PodTemplate
	if err := object(objs, "PodTemplate", ObjectName("writer"), &pt); err != nil {
		t.Fatal(err)
	}
	job := SessionJob("fleet-s", JobTemplate(&pt), Session{ID: "s-00000000000000ac", Params: map[string]string{}})
	code, msg := runJobPodIn(t, objs, job, []string{"PATH=" + t.TempDir()}, nil)
	if code != 1 || !strings.Contains(msg, "codex (@openai/codex@0.169.0) is not in the image") || !strings.Contains(msg, "scripts/k8s/image/Dockerfile") {
		t.Fatalf("exit %d, termination message %q", code, msg)
	}
}

// TestSkillSessionReportsFailure: a skill held to the default contract (autonomy.result.v1, it
// declares none) whose agent submits a failed result fails, with its summary as the reason.
func TestSkillSessionReportsFailure(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the image's agent CLIs run on Linux")
	}
	program := agentclitest.Require(t, "codex")
	model := modelfake.Start(
		modelfake.Turn{Tool: "submit_result", Args: json.RawMessage(`{"status":"failed","summary":"The input was unreadable."}`)},
		modelfake.Turn{JSON: json.RawMessage(`{"status":"done","summary":"final message"}`)},
	)
	defer model.Close()
	dir := writeFleet(t, strings.NewReplacer("PRESET", "codex", "MODEL", "gpt-5.5", "UPSTREAM", model.URL(),
		"    result: { schema: { type: object, required: [verdict], properties: { verdict: { type: string } }, additionalProperties: false } }\n", "").Replace(skillProfile))
	skill := filepath.Join(dir, "skills", "writer", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("Read the input.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	objs := compiledObjects(t, dir)
	fc, err := ReadFleetConfig(objs)
	if err != nil || fc.Actors[0].Actor != "writer" || fc.Actors[0].Result != resultsDir+"/autonomy.result.v1.json" {
		t.Fatalf("the writer is not held to the default contract: %+v %v", fc.Actors, err)
	}
	root := startModelProxy(t, objs)
	var pt corev1.PodTemplate
	if err := object(objs, "PodTemplate", ObjectName("writer"), &pt); err != nil {
		t.Fatal(err)
	}
	job := SessionJob("fleet-s", JobTemplate(&pt), Session{ID: "s-00000000000000ad", Params: map[string]string{}})
	image := []string{"PATH=" + filepath.Dir(program) + string(os.PathListSeparator) + os.Getenv("PATH")}
	code, msg := runJobPodIn(t, objs, job, image, map[string]string{ModelProxyURL("fleet-s"): root})
	if code != 1 || msg != "autonomy session s-00000000000000ad: its agent reported its work failed: The input was unreadable." {
		t.Fatalf("exit %d, termination message %q", code, msg)
	}
}
