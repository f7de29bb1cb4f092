package kubernetes

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/autonomyhq/autonomy/internal/k8stest"
	"github.com/autonomyhq/autonomy/internal/kubeclient"
)

// clusterObjects are the names of the admission policies and bindings in the cluster labelled
// as fleet ns's, as "Kind/name", sorted.
func clusterObjects(t *testing.T, cs *kubeclient.Client, ns string) []string {
	t.Helper()
	var out []string
	for _, gk := range clusterKinds {
		m, err := cs.Mapper().RESTMapping(gk, "v1")
		if err != nil {
			t.Fatal(err)
		}
		data, err := cs.Resource(m, "").List(context.Background(), metav1.ListOptions{LabelSelector: LabelFleet + "=" + ns})
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Items []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			t.Fatal(err)
		}
		for _, it := range list.Items {
			out = append(out, gk.Kind+"/"+it.Metadata.Name)
		}
	}
	slices.Sort(out)
	return out
}

// wanted are the names of the admission policies and bindings objs holds, as clusterObjects.
func wanted(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if slices.Contains(clusterKinds, o.GroupVersionKind().GroupKind()) {
			out = append(out, o.GetKind()+"/"+o.GetName())
		}
	}
	slices.Sort(out)
	return out
}

// installFormerNames installs fleet ns's policy on Jobs and its binding under the name the compile
// gave them before the rename (autonomy-NAMESPACE-sessions), with the labels it gave them,
// returning their names as clusterObjects.
func installFormerNames(t *testing.T, cfg *rest.Config, objs []*unstructured.Unstructured, ns string) []string {
	t.Helper()
	former := "autonomy-" + ns + "-sessions"
	var olds []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetName() != AdmissionPolicyName(ns) {
			continue
		}
		old := o.DeepCopy()
		old.SetName(former)
		if old.GetKind() == "ValidatingAdmissionPolicyBinding" {
			if err := unstructured.SetNestedField(old.Object, former, "spec", "policyName"); err != nil {
				t.Fatal(err)
			}
		}
		olds = append(olds, old)
	}
	if len(olds) != 2 {
		t.Fatalf("fleet %s: %d objects named %s, want the policy and its binding", ns, len(olds), AdmissionPolicyName(ns))
	}
	apply(t, cfg, olds)
	return []string{"ValidatingAdmissionPolicy/" + former, "ValidatingAdmissionPolicyBinding/" + former}
}

// TestPruneDeletesWhatTheFleetNoLongerWrites: after an apply of a profile that dropped an agent,
// Prune deletes that agent's launch policy and binding, and the policies of the names before the
// rename, of this fleet only: every policy the compile writes stays, and nothing of the fleet in
// another namespace is touched, the one whose namespace starts with this one's and whose former
// names were this fleet's included.
func TestPruneDeletesWhatTheFleetNoLongerWrites(t *testing.T) {
	c := k8stest.Get(t)
	cs, err := kubeclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nsA := namespace("prune")
	// A namespace that starts with A's: B's former names (autonomy-A-launch-stopper-sessions) read
	// as fleet A's former launch policy of an agent stopper-sessions.
	nsB := nsA + "-launch-stopper"
	inNS := func(profile, ns string) []*unstructured.Unstructured {
		return compiledObjects(t, writeFleet(t, strings.Replace(profile, "namespace: fleet-a", "namespace: "+ns, 1)))
	}
	fullA, fullB := inNS(fleetProfile, nsA), inNS(fleetProfile, nsB)
	apply(t, c.Config, fullA)
	apply(t, c.Config, fullB)
	formerA := installFormerNames(t, c.Config, fullA, nsA)
	formerB := installFormerNames(t, c.Config, fullB, nsB)
	beforeB := clusterObjects(t, cs, nsB)
	if !slices.Equal(beforeB, slices.Sorted(slices.Values(append(wanted(fullB), formerB...)))) {
		t.Fatalf("fleet B before: %v", beforeB)
	}

	stopper := "  stopper:\n    behavior: scripts/run.sh\n    capabilities: [agent:cancel@worker_1]\n    triggers: [{ dispatch: true }]\n"
	if !strings.Contains(fleetProfile, stopper) {
		t.Fatal("the fleet has no stopper to drop")
	}
	dropped := inNS(strings.Replace(fleetProfile, stopper, "", 1), nsA)
	apply(t, c.Config, dropped)
	pruned, err := Prune(ctx, cs, dropped)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pruned {
		got = append(got, p.Kind+"/"+p.Name)
	}
	slices.Sort(got)
	launch := LaunchPolicyName(nsA, "stopper")
	want := slices.Sorted(slices.Values(append([]string{"ValidatingAdmissionPolicy/" + launch, "ValidatingAdmissionPolicyBinding/" + launch,
		"ServiceAccount/stopper", "Role/stopper", "RoleBinding/stopper", "PodTemplate/stopper"}, formerA...)))
	if !slices.Equal(got, want) {
		t.Errorf("pruned %v\nwant   %v", got, want)
	}
	if after := clusterObjects(t, cs, nsA); !slices.Equal(after, wanted(dropped)) {
		t.Errorf("fleet A after the prune: %v\nwant what its compile writes: %v", after, wanted(dropped))
	}
	if after := clusterObjects(t, cs, nsB); !slices.Equal(after, beforeB) {
		t.Errorf("fleet B after fleet A's prune: %v\nwant it untouched: %v", after, beforeB)
	}
	if again, err := Prune(ctx, cs, dropped); err != nil || len(again) != 0 {
		t.Errorf("a second prune: %v, %v; want nothing", again, err)
	}
}

// TestPruneDeletesNothingBeforeTheApply: a prune of a compile whose policies are not all installed
// (run before the apply, or after one that failed) deletes nothing, saying to apply first: the
// fleet's namespace is never left without its policies.
func TestPruneDeletesNothingBeforeTheApply(t *testing.T) {
	c := k8stest.Get(t)
	cs, err := kubeclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace("prune-first")
	full := compiledObjects(t, writeFleet(t, strings.Replace(fleetProfile, "namespace: fleet-a", "namespace: "+ns, 1)))
	apply(t, c.Config, full)
	installFormerNames(t, c.Config, full, ns)
	before := clusterObjects(t, cs, ns)
	grown := strings.Replace(fleetProfile, "  writer:\n", "  newcomer:\n    behavior: scripts/run.sh\n    triggers: [{ dispatch: true }]\n  writer:\n", 1)
	next := compiledObjects(t, writeFleet(t, strings.Replace(grown, "namespace: fleet-a", "namespace: "+ns, 1)))
	pruned, err := Prune(context.Background(), cs, next)
	if err == nil || !strings.Contains(err.Error(), LaunchPolicyName(ns, "newcomer")+" is not installed: apply the installation first") || len(pruned) != 0 {
		t.Errorf("a prune before the apply: %v, %v; want nothing deleted and an error saying to apply first", pruned, err)
	}
	if after := clusterObjects(t, cs, ns); !slices.Equal(after, before) {
		t.Errorf("after a refused prune: %v\nwant %v", after, before)
	}
}

// pruneProfile is a fleet of two agents: keep, a script, and gone, a skill with a cron trigger and
// agent:list (a ServiceAccount with a token, a Role and RoleBinding, a PodTemplate, a CronJob, its
// launch policy, and the fleet's model proxy, which only gone needs).
const pruneProfile = `schema: autonomy.ir.v1
targets: [kubernetes]
actors:
  keep:
    behavior: scripts/run.sh
    triggers: [{ dispatch: true }]
  gone:
    behavior: skills/writer
    capabilities: [agent:list]
    triggers: [{ cron: "0 9 * * *" }, { dispatch: true }]
policy:
  maxConcurrent: 2
  box:
    kubernetes: { namespace: fleet-a, image: registry.example/autonomy-agent:v1 }
`

// namespaced lists the objects of kinds in namespace ns, as "Kind/name", sorted.
func namespaced(t *testing.T, cs *kubeclient.Client, ns string) []string {
	t.Helper()
	var out []string
	for _, k := range pruneKinds {
		if !k.namespaced {
			continue
		}
		m, err := cs.Mapper().RESTMapping(k.gk, "v1")
		if err != nil {
			t.Fatal(err)
		}
		data, err := cs.Resource(m, ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Items []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			t.Fatal(err)
		}
		for _, it := range list.Items {
			out = append(out, k.gk.Kind+"/"+it.Metadata.Name)
		}
	}
	slices.Sort(out)
	return out
}

// TestPruneDeletesADroppedAgentsNamespacedObjects: after an apply of a profile that dropped the
// agent gone, Prune deletes its ServiceAccount, Role, RoleBinding, PodTemplate and CronJob, and
// the model proxy no agent needs any more, in the fleet's namespace only; it leaves gone's
// session in flight (its Job, and the Job its CronJob started), an ask, an object labelled as
// the fleet's but not managed by autonomy, an unlabelled lookalike, and the same fleet in another
// namespace.
func TestPruneDeletesADroppedAgentsNamespacedObjects(t *testing.T) {
	c := k8stest.Get(t)
	cs, err := kubeclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(c.Config)
	nsA, nsB := namespace("prune-ns"), namespace("prune-ns")
	inNS := func(profile, ns string) []*unstructured.Unstructured {
		return compiledObjects(t, writeFleet(t, strings.Replace(profile, "namespace: fleet-a", "namespace: "+ns, 1)))
	}
	fullA := inNS(pruneProfile, nsA)
	apply(t, c.Config, fullA)
	apply(t, c.Config, inNS(pruneProfile, nsB))
	beforeB := namespaced(t, cs, nsB)

	// What prune must leave in A: gone's session in flight and the Job its CronJob made (owned
	// by it), an ask of the fleet, and lookalikes of gone's objects autonomy did not make.
	gone := ObjectName("gone")
	var cj batchv1.CronJob
	if err := object(fullA, "CronJob", cronJobName("gone", 0), &cj); err != nil {
		t.Fatal(err)
	}
	live, err := admin.BatchV1().CronJobs(nsA).Get(ctx, cj.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	suspend := true
	session := sessionJob(t, admin, nsA, "gone", "s-gone-running")
	session.Spec.Suspend = &suspend
	if _, err := admin.BatchV1().Jobs(nsA).Create(ctx, session, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fired := sessionJob(t, admin, nsA, "gone", "s-gone-cron")
	fired.Spec.Suspend = &suspend
	fired.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: live.Name, UID: live.UID}}
	if _, err := admin.BatchV1().Jobs(nsA).Create(ctx, fired, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	askLabels := ActorLabels(nsA, "gone")
	askLabels[LabelComponent], askLabels[LabelSession] = ComponentAsk, "a-lookalike"
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "a-lookalike", Labels: askLabels}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "not-managed", Labels: map[string]string{LabelFleet: nsA}}},
	} {
		if _, err := admin.CoreV1().ConfigMaps(nsA).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, sa := range []*corev1.ServiceAccount{
		{ObjectMeta: metav1.ObjectMeta{Name: gone + "-copy"}},
		{ObjectMeta: metav1.ObjectMeta{Name: gone + "-other", Labels: map[string]string{LabelFleet: nsA, LabelManaged: "someone-else", LabelActor: gone}}},
	} {
		if _, err := admin.CoreV1().ServiceAccounts(nsA).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := namespaced(t, cs, nsA)

	kept := inNS(strings.Replace(pruneProfile, "  gone:\n    behavior: skills/writer\n    capabilities: [agent:list]\n    triggers: [{ cron: \"0 9 * * *\" }, { dispatch: true }]\n", "", 1), nsA)
	if len(kept) >= len(fullA) {
		t.Fatal("the profile without gone is no smaller")
	}
	// Before the new compile is applied (here: a ConfigMap of it missing), nothing goes.
	for _, o := range kept {
		if o.GetKind() == "ConfigMap" && o.GetName() == ConfigMapFleet {
			if err := admin.CoreV1().ConfigMaps(nsA).Delete(ctx, ConfigMapFleet, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if pruned, err := Prune(ctx, cs, kept); err == nil || !strings.Contains(err.Error(), "ConfigMap "+ConfigMapFleet+" is not installed") || len(pruned) != 0 {
		t.Fatalf("a prune before the apply: %v, %v; want nothing deleted", pruned, err)
	}
	apply(t, c.Config, kept)
	pruned, err := Prune(ctx, cs, kept)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pruned {
		if p.Namespace != "" && p.Namespace != nsA {
			t.Errorf("pruned %s/%s in namespace %s", p.Kind, p.Name, p.Namespace)
		}
		got = append(got, p.Kind+"/"+p.Name)
	}
	slices.Sort(got)
	launch := LaunchPolicyName(nsA, "gone")
	want := []string{"CronJob/" + cj.Name, "Deployment/" + ModelProxyName, "PodTemplate/" + gone, "Role/" + gone, "RoleBinding/" + gone,
		"Service/" + ModelProxyName, "ServiceAccount/" + gone, "ServiceAccount/" + ModelProxyName,
		"ValidatingAdmissionPolicy/" + launch, "ValidatingAdmissionPolicyBinding/" + launch}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("pruned %v\nwant   %v", got, want)
	}
	var left []string
	for _, o := range before {
		if !slices.Contains(want, o) {
			left = append(left, o)
		}
	}
	if after := namespaced(t, cs, nsA); !slices.Equal(after, left) {
		t.Errorf("fleet A after the prune: %v\nwant %v", after, left)
	}
	for _, name := range []string{session.Name, fired.Name} {
		if _, err := admin.BatchV1().Jobs(nsA).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("gone's session %s: %v; want it left to finish", name, err)
		}
	}
	if after := namespaced(t, cs, nsB); !slices.Equal(after, beforeB) {
		t.Errorf("fleet B after fleet A's prune: %v\nwant it untouched: %v", after, beforeB)
	}
	if again, err := Prune(ctx, cs, kept); err != nil || len(again) != 0 {
		t.Errorf("a second prune: %v, %v; want nothing", again, err)
	}
}

// TestPruneRefusesAFolderNotTheAppliedCompile: a prune from a folder that is not the compile the
// cluster holds deletes nothing, saying to compile again and apply: an out-of-date folder (an
// older compile than the one applied, which would delete the launch policy, ServiceAccount,
// Role, RoleBinding and PodTemplate of the agent added since), a kustomization listing the
// Namespace alone (which would delete every policy of the fleet, .sessions and .configmaps
// included), and a cluster installed before the compile's hash was written. From the applied
// compile's folder, it runs.
func TestPruneRefusesAFolderNotTheAppliedCompile(t *testing.T) {
	c := k8stest.Get(t)
	cs, err := kubeclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := namespace("prune-stale")
	inNS := func(profile string) []*unstructured.Unstructured {
		return compiledObjects(t, writeFleet(t, strings.Replace(profile, "namespace: fleet-a", "namespace: "+ns, 1)))
	}
	old := inNS(fleetProfile)
	grown := strings.Replace(fleetProfile, "  writer:\n", "  newcomer:\n    behavior: scripts/run.sh\n    capabilities: [agent:list]\n    triggers: [{ cron: \"0 9 * * *\" }, { dispatch: true }]\n  writer:\n", 1)
	if grown == fleetProfile {
		t.Fatal("no agent added")
	}
	next := inNS(grown)
	apply(t, c.Config, old)
	apply(t, c.Config, next)
	policies, objects := clusterObjects(t, cs, ns), namespaced(t, cs, ns)
	if !slices.Contains(objects, "ServiceAccount/newcomer") || !slices.Contains(policies, "ValidatingAdmissionPolicy/"+LaunchPolicyName(ns, "newcomer")) {
		t.Fatalf("the newcomer is not installed: %v %v", policies, objects)
	}
	unchanged := func(what string) {
		t.Helper()
		if after := clusterObjects(t, cs, ns); !slices.Equal(after, policies) {
			t.Errorf("after %s: policies %v\nwant %v", what, after, policies)
		}
		if after := namespaced(t, cs, ns); !slices.Equal(after, objects) {
			t.Errorf("after %s: objects %v\nwant %v", what, after, objects)
		}
	}

	pruned, err := Prune(ctx, cs, old)
	if err == nil || !strings.Contains(err.Error(), "the cluster holds another compile than this folder's") || !strings.Contains(err.Error(), "nothing was deleted") || len(pruned) != 0 {
		t.Errorf("a prune of the older compile: %v, %v; want nothing deleted and an error saying to compile again and apply", pruned, err)
	}
	unchanged("a prune of the older compile")

	var onlyNS []*unstructured.Unstructured
	for _, o := range next {
		if o.GetKind() == "Namespace" {
			onlyNS = append(onlyNS, o)
		}
	}
	pruned, err = Prune(ctx, cs, onlyNS)
	if err == nil || !strings.Contains(err.Error(), "not a whole compile") || len(pruned) != 0 {
		t.Errorf("a prune of the Namespace alone: %v, %v; want nothing deleted and an error saying it is not a whole compile", pruned, err)
	}
	unchanged("a prune of the Namespace alone")

	if pruned, err := Prune(ctx, cs, next); err != nil || len(pruned) != 0 {
		t.Errorf("a prune of the applied compile: %v, %v; want nothing to prune", pruned, err)
	}
	unchanged("a prune of the applied compile")

	// A cluster whose Namespace carries no hash (applied by an older autonomy): nothing goes
	// until this compile is applied.
	admin := kubernetes.NewForConfigOrDie(c.Config)
	live, err := admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(live.Annotations, AnnotationCompile)
	if _, err := admin.CoreV1().Namespaces().Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pruned, err = Prune(ctx, cs, old)
	if err == nil || !strings.Contains(err.Error(), "no compile's hash") || len(pruned) != 0 {
		t.Errorf("a prune of a cluster with no hash: %v, %v; want nothing deleted", pruned, err)
	}
	unchanged("a prune of a cluster with no hash")

	// Once the older compile is applied again, its prune deletes what only the later one wrote.
	apply(t, c.Config, old)
	pruned, err = Prune(ctx, cs, old)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pruned {
		got = append(got, p.Kind+"/"+p.Name)
	}
	slices.Sort(got)
	launch := LaunchPolicyName(ns, "newcomer")
	want := []string{"CronJob/" + cronJobName("newcomer", 0), "PodTemplate/newcomer", "Role/newcomer", "RoleBinding/newcomer", "ServiceAccount/newcomer",
		"ValidatingAdmissionPolicy/" + launch, "ValidatingAdmissionPolicyBinding/" + launch}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("pruned %v\nwant   %v", got, want)
	}
}
