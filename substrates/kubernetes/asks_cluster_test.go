package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/autonomyhq/autonomy/internal/k8stest"
	"github.com/autonomyhq/autonomy/internal/kubeclient"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// bossSession is the session of boss whose pod asks in TestInClusterAsk; its pod is named as the
// Job controller names a Job's pods.
const bossSession, bossPod = "s-0123456789abcdef", "s-0123456789abcdef-x7k2p"

// podClient runs a pod of actor's template named pod in ns (as the Job controller would) and
// returns the runner's client acting with a token of the actor's ServiceAccount bound to that pod: what a
// session's pod mounts, so the API server knows the pod it acts from.
func podClient(t *testing.T, cfg *rest.Config, admin *kubernetes.Clientset, ns, actor, pod string) *kubeclient.Client {
	t.Helper()
	ctx := context.Background()
	j := sessionJob(t, admin, ns, actor, strings.TrimSuffix(pod, pod[len(pod)-6:]))
	p, err := admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod, Labels: j.Spec.Template.Labels}, Spec: j.Spec.Template.Spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, ObjectName(actor), &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{
		BoundObjectRef: &authnv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := rest.AnonymousClientConfig(cfg)
	c.BearerToken = tok.Status.Token
	return runnerClient(t, c)
}

// mountInstall writes what a session's pod has mounted at AUTONOMY_DIR that the runner reads
// (the fleet config, the result contracts) into a temp dir, and sets the pod's env for actor's
// session, so OpenRunner runs as it does in the pod.
func mountInstall(t *testing.T, admin *kubernetes.Clientset, ns, actor, session string) {
	t.Helper()
	dir := t.TempDir()
	get := func(name string) *corev1.ConfigMap {
		cm, err := admin.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	files := map[string]string{FleetConfigKey: get(ConfigMapFleet).Data[FleetConfigKey]}
	var fleet runnerFleet
	if err := json.Unmarshal([]byte(files[FleetConfigKey]), &fleet); err != nil {
		t.Fatal(err)
	}
	install := get(ConfigMapInstall)
	for _, a := range fleet.Actors {
		if a.Result != "" {
			files[a.Result] = install.Data[InstallKey(a.Result)]
		}
	}
	for path, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(EnvDir, dir)
	t.Setenv(EnvSession, session)
	t.Setenv(EnvActor, actor)
}

// TestInClusterAsk: a session of boss (agent:launch, which reaches the person owner) parks an
// ask from inside its pod with its own ServiceAccount's pod-bound token, through the runner as
// the pod runs it: the ask names boss and its session, and the operator resolves it with its
// token. Every tampering by that token is refused: an ask naming another asker, another session,
// a person outside the scope or an agent, one born resolved, a ConfigMap that is no ask, an edit
// of the fleet config, resolving its own ask, and a write of the slots beyond one claim.
func TestInClusterAsk(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("asks")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	boss := podClient(t, c.Config, admin, ns, "boss", bossPod)
	cms := boss.CoreV1().ConfigMaps(ns)
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	waitPolicy(t, func() error {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-an-ask"}}, dry)
		return err
	})

	mountInstall(t, admin, ns, "boss", bossSession)
	r, err := OpenRunner(ctx, boss, ns, callerFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.LaunchRef(ctx, "owner", "#7", ir.LaunchParams{"TOPIC": "release"})
	if err != nil {
		t.Fatalf("boss's session parking an ask to owner from its pod: %v", err)
	}
	ask, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, s.ID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ask.Labels[LabelAskedBy] != "boss" || ask.Labels[LabelAskedBySession] != bossSession {
		t.Errorf("the ask's labels %v: want asked by boss in %s", ask.Labels, bossSession)
	}
	// A session's ask carries no token: its model never holds one, so none exists until the
	// operator mints one.
	if s.Token != "" || ask.Data[askTokenHash] != "" {
		t.Errorf("a session's ask has token %q, hash %q: want none", s.Token, ask.Data[askTokenHash])
	}
	// The pod's CLI (json too) and the launch tool answer with the ask's id and a note naming
	// --new-token, never a token.
	var out, errOut strings.Builder
	if err := r.runVerb(ctx, substrates.RunnerCall{Verb: "launch", Args: []string{"owner"}, Ref: "#8", Params: map[string]string{"TOPIC": "x"}, Format: "json", Out: &out, Err: &errOut}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "atk_") || strings.Contains(out.String(), `"token"`) || !strings.Contains(out.String(), `"a-`) {
		t.Errorf("the pod's launch --format json of an ask printed %s", out.String())
	}
	h := &podHands{call: &sessionCall{env: []string{EnvParams + "={}"}, id: bossSession, actor: "boss"}, cfg: &ActorConfig{Actor: "boss", Capabilities: []string{"agent:launch"}},
		open: func(context.Context) (*Runner, error) { return r, nil }}
	got, err := h.Apply(ctx, tools.Effect{Tool: tools.Launch}, &tools.LaunchInput{Actor: "owner", Subject: "#9", Params: map[string]string{"TOPIC": "x"}})
	if err != nil || strings.Contains(fmt.Sprint(got), "atk_") || !strings.Contains(fmt.Sprint(got), "--new-token") {
		t.Errorf("the launch tool parking an ask answered %v %v, want its id and a note naming --new-token, no token", got, err)
	}
	// A person's params are checked as an agent's: declared, not reserved, not set where a
	// session may not set them, bounded.
	for params, want := range map[string]string{
		`{"NOT_DECLARED":"x"}`:                                  "NOT_DECLARED",
		`{"LD_PRELOAD":"/tmp/x.so"}`:                            "reserved",
		`{"TOPIC":"` + strings.Repeat("x", MaxAskParams) + `"}`: "at most",
	} {
		var p ir.LaunchParams
		if err := json.Unmarshal([]byte(params), &p); err != nil {
			t.Fatal(err)
		}
		if _, err := r.LaunchRef(ctx, "owner", "#7", p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("an ask with params %.60s: %v, want refused saying %q", params, err, want)
		}
	}
	if _, err := r.LaunchRef(ctx, "owner", strings.Repeat("7", MaxAskRef+1), nil); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("an ask of a 1 KiB+ subject: %v, want refused", err)
	}

	// Tampering with the pod's own token.
	forged := func(change func(*corev1.ConfigMap)) *corev1.ConfigMap {
		cm := ask.DeepCopy()
		cm.ResourceVersion, cm.UID, cm.CreationTimestamp, cm.ManagedFields = "", "", metav1.Time{}, nil
		cm.Name = "a-00000000000000aa"
		cm.Labels[LabelSession] = cm.Name
		change(cm)
		return cm
	}
	if _, err := cms.Create(ctx, forged(func(*corev1.ConfigMap) {}), dry); err != nil {
		t.Fatalf("a second well-formed ask is refused: %v", err)
	}
	for what, change := range map[string]func(*corev1.ConfigMap){
		"asked by triage":          func(cm *corev1.ConfigMap) { cm.Labels[LabelAskedBy] = "triage" },
		"asked by another session": func(cm *corev1.ConfigMap) { cm.Labels[LabelAskedBySession] = "s-ffffffffffffffff" },
		"asked by no session":      func(cm *corev1.ConfigMap) { delete(cm.Labels, LabelAskedBySession) },
		"to an agent": func(cm *corev1.ConfigMap) {
			cm.Labels[LabelActor], cm.Annotations[AnnotationActor], cm.Data[askActor] = "worker-1-ba7bf687", "worker_1", "worker_1"
		},
		"born resolved": func(cm *corev1.ConfigMap) { cm.Data[askStatus] = "done"; cm.Data[askEvidence] = "none" },
		"born done":     func(cm *corev1.ConfigMap) { cm.Data[askStatus] = "done" },
		"a chosen hash": func(cm *corev1.ConfigMap) { cm.Data[askTokenHash] = "x" },
		// The session chooses its ask's token: it would redeem the ask itself.
		"a chosen token": func(cm *corev1.ConfigMap) { cm.Data[askTokenHash] = hashToken("atk_chosen") },
		// A CEL string's size counts code points: 4-byte runes once got 4 KiB of subject and
		// 256 KiB of params past bounds of 1 KiB and 64 KiB.
		"a subject of 4-byte runes": func(cm *corev1.ConfigMap) { cm.Data[askRef] = strings.Repeat("\U0001F600", MaxAskRef/4+1) },
		"params of 4-byte runes": func(cm *corev1.ConfigMap) {
			cm.Data[askParams] = `{"TOPIC":"` + strings.Repeat("\U0001F600", MaxAskParams/4) + `"}`
		},
		"not an ask id":       func(cm *corev1.ConfigMap) { cm.Name = "autonomy-fleet-2"; cm.Labels[LabelSession] = cm.Name },
		"an extra key":        func(cm *corev1.ConfigMap) { cm.Data["fleet.json"] = "{}" },
		"a subject too large": func(cm *corev1.ConfigMap) { cm.Data[askRef] = strings.Repeat("7", MaxAskRef+1) },
		"params too large": func(cm *corev1.ConfigMap) {
			cm.Data[askParams] = `{"TOPIC":"` + strings.Repeat("x", MaxAskParams) + `"}`
		},
		"no labels": func(cm *corev1.ConfigMap) { cm.Labels = nil },
	} {
		if _, err := cms.Create(ctx, forged(change), dry); err == nil || !strings.Contains(err.Error(), "denied request") {
			t.Errorf("an ask %s: %v, want denied by the admission policy", what, err)
		}
	}
	fleet, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, ConfigMapFleet, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Data[FleetConfigKey] = "{}"
	if _, err := cms.Update(ctx, fleet, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsForbidden(err) {
		t.Errorf("boss editing the fleet config: %v, want forbidden", err)
	}
	resolved := ask.DeepCopy()
	resolved.Data[askStatus], resolved.Data[askEvidence] = "done", "I say so"
	if _, err := cms.Update(ctx, resolved, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsForbidden(err) {
		t.Errorf("boss resolving its own ask: %v, want forbidden", err)
	}
	if err := cms.Delete(ctx, s.ID, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsForbidden(err) {
		t.Errorf("boss deleting its own ask: %v, want forbidden", err)
	}
	// triage's launch reaches worker_1 only: it may not ask owner.
	if _, err := as(c.Config, ns, "triage").CoreV1().ConfigMaps(ns).Create(ctx, forged(func(cm *corev1.ConfigMap) { cm.Labels[LabelAskedBy] = "triage"; delete(cm.Labels, LabelAskedBySession) }), dry); err == nil {
		t.Errorf("triage (agent:launch@worker_1) parked an ask to owner")
	}

	// Resolution stays with the operator and the token.
	op, err := OpenRunner(ctx, runnerClient(t, c.Config), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	// A session's ask: the model never reads its token (the MCP tool and the pod's CLI keep it
	// from it); the operator takes a new one, which the old one no longer matches.
	if _, err := r.NewAskToken(ctx, s.ID); err == nil {
		t.Errorf("a session took a new token for its ask")
	}
	// Until then, nothing redeems it, and the refusal says how to mint one.
	for _, tok := range []string{"", "atk_guess"} {
		if ok, err := op.updateAsk(ctx, s.ID, ir.Patch{Status: ir.Done, Token: tok, Evidence: "approved in #7"}); ok || err == nil || (tok != "" && !strings.Contains(err.Error(), "--new-token")) {
			t.Errorf("resolving a session's ask before a token is minted (token %q): %v %v, want refused naming --new-token", tok, ok, err)
		}
	}
	first, err := op.NewAskToken(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := op.NewAskToken(ctx, s.ID)
	if err != nil || !strings.HasPrefix(fresh, "atk_") {
		t.Fatalf("the operator's new token: %q %v", fresh, err)
	}
	if ok, err := op.updateAsk(ctx, s.ID, ir.Patch{Status: ir.Done, Token: first, Evidence: "approved in #7"}); ok || err == nil {
		t.Errorf("the replaced token still redeems the ask: %v %v", ok, err)
	}
	if ok, err := op.updateAsk(ctx, s.ID, ir.Patch{Status: ir.Done, Token: fresh, Evidence: "approved in #7"}); !ok || err != nil {
		t.Errorf("the operator resolving the ask with its new token: %v %v", ok, err)
	}
	if _, err := op.NewAskToken(ctx, s.ID); err == nil || !strings.Contains(err.Error(), "takes no token") {
		t.Errorf("a new token for a resolved ask: %v", err)
	}
	// An ask whose params do not read (written by hand) is listed without them: it used to make
	// list fail for the whole fleet.
	bad := forged(func(cm *corev1.ConfigMap) {
		cm.Name = "a-00000000000000bb"
		cm.Labels[LabelSession] = cm.Name
		cm.Data[askParams] = "not json"
	})
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	listed, err := op.List(ctx)
	if err != nil || !slices.ContainsFunc(listed, func(x ir.Session) bool { return x.ID == bad.Name && len(x.Params) == 0 }) {
		t.Errorf("list with an unreadable ask: %v %+v", err, listed)
	}
}

// TestSlotsAreWrittenOnlyByTheClaim: a launcher's token may update the slots ConfigMap only as a
// claim does (one claim added, the others kept or dropped), never rewrite a claim, add several,
// write a key that is no session id or a value that is no time, relabel it or delete it.
func TestSlotsAreWrittenOnlyByTheClaim(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("slots")
	install(t, c.Config, ns)
	admin := kubernetes.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	slots, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, SlotsConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slots.Data = map[string]string{"s-1111111111111111": "2026-01-02T03:04:05.123456789Z", "s-2222222222222222": "2026-01-02T03:04:06Z"}
	if slots, err = admin.CoreV1().ConfigMaps(ns).Update(ctx, slots, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := as(c.Config, ns, "boss").CoreV1().ConfigMaps(ns)
	update := func(change func(*corev1.ConfigMap)) error {
		cm := slots.DeepCopy()
		change(cm)
		_, err := cms.Update(ctx, cm, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	waitPolicy(t, func() error { return update(func(cm *corev1.ConfigMap) { cm.Data["x"] = "y" }) })
	for what, change := range map[string]func(*corev1.ConfigMap){
		"a claim": func(cm *corev1.ConfigMap) { cm.Data["s-3333333333333333"] = "2026-01-02T03:05:00Z" },
		"a claim, dropping one": func(cm *corev1.ConfigMap) {
			delete(cm.Data, "s-1111111111111111")
			cm.Data["s-3333333333333333"] = "2026-01-02T03:05:00Z"
		},
		"dropping a lapsed one":  func(cm *corev1.ConfigMap) { delete(cm.Data, "s-2222222222222222") },
		"the same, written back": func(*corev1.ConfigMap) {},
	} {
		if err := update(change); err != nil {
			t.Errorf("%s is refused: %v", what, err)
		}
	}
	for what, change := range map[string]func(*corev1.ConfigMap){
		"two claims": func(cm *corev1.ConfigMap) {
			cm.Data["s-3333333333333333"], cm.Data["s-4444444444444444"] = "2026-01-02T03:05:00Z", "2026-01-02T03:05:00Z"
		},
		"a claim renewed":  func(cm *corev1.ConfigMap) { cm.Data["s-1111111111111111"] = "2099-01-01T00:00:00Z" },
		"a key no session": func(cm *corev1.ConfigMap) { cm.Data["fleet.json"] = "2026-01-02T03:05:00Z" },
		"a value no time":  func(cm *corev1.ConfigMap) { cm.Data["s-3333333333333333"] = "forever" },
		"relabelled":       func(cm *corev1.ConfigMap) { cm.Labels["x"] = "y" },
		"binary data":      func(cm *corev1.ConfigMap) { cm.BinaryData = map[string][]byte{"s-3333333333333333": []byte("x")} },
		"made immutable":   func(cm *corev1.ConfigMap) { yes := true; cm.Immutable = &yes },
		"a finalizer":      func(cm *corev1.ConfigMap) { cm.Finalizers = []string{"example.com/keep"} },
		"annotated":        func(cm *corev1.ConfigMap) { cm.Annotations = map[string]string{"x": "y"} },
	} {
		if err := update(change); err == nil || !strings.Contains(err.Error(), "denied request") {
			t.Errorf("slots %s: %v, want denied by the admission policy", what, err)
		}
	}
	if err := cms.Delete(ctx, SlotsConfigMap, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting the slots: %v, want forbidden", err)
	}
}

// TestAskCannotClaimWhoAsked: an ask a session's ServiceAccount (boss) parks whose params field
// claims another actor and role for the params the person's dispatch trigger binds to
// subject.actor and subject.actorRole (WHO triage, ROLE OWNER) reads back, for the operator's
// get and list, as a session's launch sets them: WHO boss, ROLE NONE; TOPIC verbatim.
func TestAskCannotClaimWhoAsked(t *testing.T) {
	c := k8stest.Get(t)
	ns := namespace("askwho")
	installFleet(t, c.Config, ns, strings.Replace(fleetProfile, "behavior: humans/ask.md\n    triggers: [{ dispatch: true, params: { TOPIC: subject.text } }]",
		"behavior: humans/ask.md\n    triggers: [{ dispatch: true, params: { TOPIC: subject.text, WHO: subject.actor, ROLE: subject.actorRole } }]", 1))
	ctx := context.Background()
	owner := RunnerActor{Name: "owner", Human: true, Params: []string{"TOPIC", "WHO", "ROLE"}, Sources: []Param{{"TOPIC", "subject.text"}, {"WHO", "subject.actor"}, {"ROLE", "subject.actorRole"}}}
	boss, err := NewRunner(RunnerOptions{Client: runnerClient(t, asConfig(c.Config, ns, "boss")), Namespace: ns,
		Actors: []RunnerActor{owner, {Name: "boss"}}, AskedBy: &Asker{Actor: "boss"}})
	if err != nil {
		t.Fatal(err)
	}
	waitPolicy(t, func() error {
		_, err := as(c.Config, ns, "boss").CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-an-ask"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	s, err := boss.engage(ctx, &owner, "#1", ir.LaunchParams{"TOPIC": "release", "WHO": "triage", "ROLE": "OWNER"})
	if err != nil {
		t.Fatalf("boss parking an ask to owner: %v", err)
	}
	op, err := OpenRunner(ctx, runnerClient(t, c.Config), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	want := ir.LaunchParams{"TOPIC": "release", "WHO": "boss", "ROLE": "NONE"}
	if got, ok, err := op.Get(ctx, s.ID); err != nil || !ok || !reflect.DeepEqual(got.Params, want) {
		t.Errorf("get of an ask claiming WHO triage, ROLE OWNER = %+v %v %v, want params %v", got, ok, err, want)
	}
	list, err := op.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range list {
		if got.ID == s.ID && !reflect.DeepEqual(got.Params, want) {
			t.Errorf("list shows the ask with params %v, want %v", got.Params, want)
		}
	}
}
