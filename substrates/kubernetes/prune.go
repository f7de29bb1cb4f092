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

// Pruned is one object Prune deleted: its kind and name.
type Pruned struct {
	Kind, Name string
}

// Prune deletes the cluster-scoped objects of the fleet objs installs (its admission policies and
// their bindings) that objs no longer holds: those of an agent the profile dropped, and those of
// the names before the rename to autonomy-NAMESPACE.… . A fleet's object is one labelled with
// its namespace (LabelFleet) and ManagedBy, as compile labels every one, the former names'
// included; another namespace's fleet is never selected. It deletes nothing unless every
// cluster-scoped object objs holds is installed: run after the apply, the namespace is never
// left unguarded.
func Prune(ctx context.Context, cs *kubeclient.Client, objs []*unstructured.Unstructured) ([]Pruned, error) {
	ns := ""
	want := map[schema.GroupKind][]string{}
	for _, o := range objs {
		gk := o.GroupVersionKind().GroupKind()
		if gk.Kind == "Namespace" && gk.Group == "" {
			ns = o.GetName()
		}
		if slices.Contains(clusterKinds, gk) {
			want[gk] = append(want[gk], o.GetName())
		}
	}
	if ns == "" {
		return nil, fmt.Errorf("the installation has no Namespace: not what compile writes")
	}
	resources := map[schema.GroupKind]*kubeclient.Unstructured{}
	for _, gk := range clusterKinds {
		m, err := cs.Mapper().RESTMapping(gk, "v1")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gk.Kind, err)
		}
		resources[gk] = cs.Resource(m, "")
		for _, name := range want[gk] {
			if _, err := resources[gk].Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("the %s %s is not installed: apply the installation first (kubectl apply --server-side -k DIR/kubernetes); nothing was deleted", gk.Kind, name)
			} else if err != nil {
				return nil, fmt.Errorf("reading the %s %s: %w", gk.Kind, name, err)
			}
		}
	}
	selector := labels.SelectorFromSet(FleetLabels(ns)).String()
	var pruned []Pruned
	for _, gk := range clusterKinds {
		data, err := resources[gk].List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return pruned, fmt.Errorf("listing the %ss of fleet %s: %w", gk.Kind, ns, err)
		}
		var list struct {
			Items []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return pruned, fmt.Errorf("listing the %ss of fleet %s: %w", gk.Kind, ns, err)
		}
		for _, it := range list.Items {
			md := it.Metadata
			// The API server selected them; a fleet's label is checked again all the same.
			if slices.Contains(want[gk], md.Name) || md.Labels[LabelFleet] != ns || md.Labels[LabelManaged] != ManagedBy {
				continue
			}
			uid := types.UID(md.UID)
			err := resources[gk].Delete(ctx, md.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if apierrors.IsNotFound(err) {
				continue // deleted meanwhile
			}
			if err != nil {
				return pruned, fmt.Errorf("deleting the %s %s: %w", gk.Kind, md.Name, err)
			}
			pruned = append(pruned, Pruned{Kind: gk.Kind, Name: md.Name})
		}
	}
	return pruned, nil
}
