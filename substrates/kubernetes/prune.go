package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"

	"gopkg.in/yaml.v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/autonomyhq/autonomy/internal/kubeclient"
	"github.com/autonomyhq/autonomy/substrates"
)

// clusterKinds are the kinds of the fleet's cluster-scoped objects but its Namespace, in the
// order Prune deletes them: a binding before its policy.
var clusterKinds = []schema.GroupKind{
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"},
}

// maxManifestBytes bounds each file ReadInstallation reads: the installation's ConfigMap holds at
// most maxInstallBytes, and no other file comes near it.
const maxManifestBytes = 8 << 20

// ReadInstallation reads the objects of the kustomization compile wrote into dir/Dir, in the order
// it lists them. Only the files the kustomization lists, under dir/Dir, are read.
func ReadInstallation(dir string) ([]*unstructured.Unstructured, error) {
	read := func(rel string) ([]byte, error) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() || st.Size() > maxManifestBytes {
			return nil, fmt.Errorf("%s: not a file of at most %d bytes, as compile writes", p, maxManifestBytes)
		}
		data := make([]byte, st.Size())
		if _, err := f.ReadAt(data, 0); err != nil && st.Size() > 0 {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return data, nil
	}
	data, err := read(Kustomization)
	if err != nil {
		return nil, fmt.Errorf("no kubernetes installation in %s (autonomy compile PROFILE --target kubernetes --dir %s writes it): %w", dir, dir, err)
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, Kustomization), err)
	}
	out := substrates.Output{Target: Name, Files: []substrates.File{{Path: Kustomization, Data: data}}}
	for _, r := range k.Resources {
		if !filepath.IsLocal(filepath.FromSlash(r)) || path.Clean(r) != r {
			return nil, fmt.Errorf("%s lists %q, not a file under %s", filepath.Join(dir, Kustomization), r, filepath.Join(dir, Dir))
		}
		data, err := read(Dir + "/" + r)
		if err != nil {
			return nil, err
		}
		out.Files = append(out.Files, substrates.File{Path: Dir + "/" + r, Data: data})
	}
	return Objects(out)
}

// Pruned is one object Prune deleted: its kind, its namespace ("" for a cluster-scoped one) and
// its name.
type Pruned struct {
	Kind, Namespace, Name string
}

// pruneKind is a kind of object Prune deletes when the compile no longer writes it.
type pruneKind struct {
	gk         schema.GroupKind
	namespaced bool
	// propagation is how the delete treats the object's dependents ("" for the server's
	// default): a CronJob's Jobs are orphaned, so a session it started runs on to its end (its
	// Job keeps its ttlSecondsAfterFinished); a Deployment's ReplicaSets and pods go with it.
	propagation metav1.DeletionPropagation
}

// pruneKinds are the kinds of the fleet's objects Prune deletes, in its order: first what an
// agent's launches and schedules need (its CronJobs, the model proxy, its rights, its
// ServiceAccount and PodTemplate, the fleet's own ConfigMaps), then the cluster-scoped admission
// policies (a binding before its policy), so nothing that may still launch is left unguarded.
// Jobs and pods are never among them: a session of a dropped agent runs on to its end.
var pruneKinds = []pruneKind{
	{gk: schema.GroupKind{Group: "batch", Kind: "CronJob"}, namespaced: true, propagation: metav1.DeletePropagationOrphan},
	{gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, namespaced: true, propagation: metav1.DeletePropagationBackground},
	{gk: schema.GroupKind{Kind: "Service"}, namespaced: true},
	{gk: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}, namespaced: true},
	{gk: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, namespaced: true},
	{gk: schema.GroupKind{Kind: "ServiceAccount"}, namespaced: true},
	{gk: schema.GroupKind{Kind: "PodTemplate"}, namespaced: true},
	{gk: schema.GroupKind{Kind: "ConfigMap"}, namespaced: true},
	{gk: clusterKinds[0]},
	{gk: clusterKinds[1]},
}

// prunable reports whether an object of fleet ns, with labels l, is one compile writes: labelled
// with the fleet (LabelFleet) and ManagedBy, and not a session's, an ask's or anything else a
// launch or the cluster makes at run time (LabelSession, a LabelComponent but the model proxy's).
func prunable(l map[string]string, ns string) bool {
	if l[LabelFleet] != ns || l[LabelManaged] != ManagedBy {
		return false
	}
	if _, ok := l[LabelSession]; ok {
		return false
	}
	c, ok := l[LabelComponent]
	return !ok || c == ComponentModelProxy
}

// Prune deletes the objects of the fleet objs installs that objs no longer holds: the
// ServiceAccount, Role, RoleBinding, PodTemplate, CronJobs and launch policy of an agent the
// profile dropped, the model proxy of a fleet left with no skill, the slots of one left with no
// maxConcurrent, and the cluster-scoped policies of the names before the rename to
// autonomy-NAMESPACE.… . A fleet's object is one labelled with its namespace (LabelFleet) and
// ManagedBy, as compile labels every one, the former names' included, and, when namespaced, in
// that namespace; another namespace's fleet, an object not so labelled, a session's Job or pod
// and an ask are never selected. It deletes nothing unless every object objs holds is in the
// cluster: run after the apply, the namespace is never left unguarded. Each delete carries the
// UID listed, so an object made anew meanwhile is left.
func Prune(ctx context.Context, cs *kubeclient.Client, objs []*unstructured.Unstructured) ([]Pruned, error) {
	ns := ""
	for _, o := range objs {
		if gk := o.GroupVersionKind().GroupKind(); gk.Kind == "Namespace" && gk.Group == "" {
			ns = o.GetName()
		}
	}
	if ns == "" {
		return nil, fmt.Errorf("the installation has no Namespace: not what compile writes")
	}
	want := map[schema.GroupKind][]string{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := cs.Mapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
		}
		on := ""
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if on = o.GetNamespace(); on != ns {
				return nil, fmt.Errorf("the %s %s is in namespace %q, not the installation's %s: not what compile writes", gvk.Kind, o.GetName(), on, ns)
			}
		}
		if _, err := cs.Resource(m, on).Get(ctx, o.GetName(), metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the %s %s is not installed: apply the installation first (kubectl apply --server-side -k DIR/kubernetes); nothing was deleted", gvk.Kind, o.GetName())
		} else if err != nil {
			return nil, fmt.Errorf("reading the %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		want[gvk.GroupKind()] = append(want[gvk.GroupKind()], o.GetName())
	}
	selector := labels.SelectorFromSet(FleetLabels(ns)).String()
	var pruned []Pruned
	for _, k := range pruneKinds {
		m, err := cs.Mapper().RESTMapping(k.gk, "v1")
		if err != nil {
			return pruned, fmt.Errorf("%s: %w", k.gk.Kind, err)
		}
		on := ""
		if k.namespaced {
			on = ns
		}
		res := cs.Resource(m, on)
		data, err := res.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return pruned, fmt.Errorf("listing the %ss of fleet %s: %w", k.gk.Kind, ns, err)
		}
		var list struct {
			Items []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return pruned, fmt.Errorf("listing the %ss of fleet %s: %w", k.gk.Kind, ns, err)
		}
		for _, it := range list.Items {
			md := it.Metadata
			// The API server selected them; a fleet's labels, and its namespace, are checked
			// again all the same.
			if slices.Contains(want[k.gk], md.Name) || !prunable(md.Labels, ns) || md.Namespace != on {
				continue
			}
			uid := types.UID(md.UID)
			opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
			if k.propagation != "" {
				p := k.propagation
				opts.PropagationPolicy = &p
			}
			err := res.Delete(ctx, md.Name, opts)
			if apierrors.IsNotFound(err) {
				continue // deleted meanwhile
			}
			if err != nil {
				return pruned, fmt.Errorf("deleting the %s %s: %w", k.gk.Kind, md.Name, err)
			}
			pruned = append(pruned, Pruned{Kind: k.gk.Kind, Namespace: on, Name: md.Name})
		}
	}
	return pruned, nil
}
