package kubernetes

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	want := slices.Sorted(slices.Values(append([]string{"ValidatingAdmissionPolicy/" + launch, "ValidatingAdmissionPolicyBinding/" + launch}, formerA...)))
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
