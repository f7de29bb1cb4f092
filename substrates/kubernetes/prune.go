package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/internal/kubeclient"
)

// clusterKinds are the kinds of the fleet's cluster-scoped objects but its Namespace, in the
// order Prune deletes them: a binding before its policy.
var clusterKinds = []schema.GroupKind{
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"},
}

// maxManifestBytes bounds each file ReadInstallation reads: the installation's ConfigMap holds at
// most maxInstallBytes, and no other file comes near it; maxInstallationBytes bounds all of them
// together, far more than any compile writes.
const (
	maxManifestBytes     = 8 << 20
	maxInstallationBytes = 32 << 20
)

// yamlLine is where a YAML error is ("line N"), or "": never the text the error quotes, which is
// the file's.
var yamlLine = regexp.MustCompile(`line \d+`)

// ReadInstallation reads the objects of the kustomization compile wrote into dir/Dir, in the order
// it lists them. Only the files the kustomization lists, under dir/Dir, are read, each once: never
// through a link, never a FIFO or a device, and never more than maxManifestBytes each or
// maxInstallationBytes in all. An error names the file and never quotes its content.
func ReadInstallation(dir string) ([]*unstructured.Unstructured, error) {
	base := filepath.Join(dir, Dir)
	again := fmt.Sprintf("compile again: autonomy compile PROFILE --target kubernetes --dir %s", dir)
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, fmt.Errorf("no kubernetes installation in %s (autonomy compile PROFILE --target kubernetes --dir %s writes it): %v", dir, dir, err)
	}
	defer root.Close()
	left := int64(maxInstallationBytes)
	read := func(rel string) ([]byte, error) {
		shown := filepath.Join(base, filepath.FromSlash(rel))
		var f *os.File
		fi, err := root.Lstat(rel)
		if err == nil && fi.Mode().IsRegular() {
			if f, err = root.OpenFile(rel, os.O_RDONLY|oNonBlock, 0); err == nil {
				defer f.Close()
				fi, err = f.Stat()
			}
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s is missing: %s", shown, again)
			}
			return nil, fmt.Errorf("reading %s: %v", shown, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is a %s, not a file as compile writes (a link, a FIFO or a device is never read): %s", shown, fileType(fi.Mode()), again)
		}
		limit := min(int64(maxManifestBytes), left)
		data, err := bounded.Read(f, limit)
		if bounded.IsTooLarge(err) {
			if limit < maxManifestBytes {
				return nil, fmt.Errorf("the files %s lists are more than %d bytes in all, more than any compile writes (at %s): %s", filepath.Join(dir, Kustomization), maxInstallationBytes, shown, again)
			}
			return nil, fmt.Errorf("%s is more than %d bytes, more than any compile writes: %s", shown, maxManifestBytes, again)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %v", shown, err)
		}
		left -= int64(len(data))
		return data, nil
	}
	notAsWritten := func(shown string, err error) error {
		where := ""
		if l := yamlLine.FindString(err.Error()); l != "" {
			where = " (at " + l + ")"
		}
		return fmt.Errorf("%s is not the YAML compile writes%s: %s", shown, where, again)
	}
	kfile := filepath.Join(dir, filepath.FromSlash(Kustomization))
	data, err := read(path.Base(Kustomization))
	if err != nil {
		if _, serr := root.Lstat(path.Base(Kustomization)); errors.Is(serr, fs.ErrNotExist) {
			return nil, fmt.Errorf("no kubernetes installation in %s (autonomy compile PROFILE --target kubernetes --dir %s writes it): %s is missing", dir, dir, kfile)
		}
		return nil, err
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, notAsWritten(kfile, err)
	}
	var objs []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, r := range k.Resources {
		if !filepath.IsLocal(filepath.FromSlash(r)) || path.Clean(r) != r || strings.Contains(r, `\`) {
			return nil, fmt.Errorf("%s lists %q, not a file under %s: %s", kfile, r, base, again)
		}
		if seen[r] {
			return nil, fmt.Errorf("%s lists %q twice, as compile never does: %s", kfile, r, again)
		}
		seen[r] = true
		data, err := read(r)
		if err != nil {
			return nil, err
		}
		docs, err := Documents(data)
		if err != nil {
			return nil, notAsWritten(filepath.Join(base, filepath.FromSlash(r)), err)
		}
		objs = append(objs, docs...)
	}
	return objs, nil
}

// fileType names the type of a file that is not a regular one.
func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// wholeCompile checks that objs are the whole of a compile of fleet ns as compile wrote it, and
// returns its hash: the fleet-wide objects every compile writes are among them, and they hash to
// the AnnotationCompile of their Namespace. A truncated or edited kustomization (one listing the
// Namespace alone would leave every policy of the fleet to delete) or a file edited since fails.
func wholeCompile(objs []*unstructured.Unstructured, ns string) (string, error) {
	again := "compile again (autonomy compile PROFILE --target kubernetes --dir DIR); nothing was deleted"
	type key struct{ group, kind, name string }
	have := map[key]int{}
	var hash string
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		have[key{gvk.Group, gvk.Kind, o.GetName()}]++
		if gvk.Kind == "Namespace" && gvk.Group == "" {
			hash = o.GetAnnotations()[AnnotationCompile]
		}
	}
	adm := "admissionregistration.k8s.io"
	for _, k := range []key{
		{"", "Namespace", ns},
		{"", "ConfigMap", ConfigMapFleet},
		{"", "ConfigMap", ConfigMapInstall},
		{adm, "ValidatingAdmissionPolicy", AdmissionPolicyName(ns)},
		{adm, "ValidatingAdmissionPolicyBinding", AdmissionPolicyName(ns)},
		{adm, "ValidatingAdmissionPolicy", ConfigMapPolicyName(ns)},
		{adm, "ValidatingAdmissionPolicyBinding", ConfigMapPolicyName(ns)},
	} {
		if have[k] != 1 {
			return "", fmt.Errorf("the installation holds %d of the %s %s every compile writes once: not a whole compile (a kustomization truncated or edited?); %s", have[k], k.kind, k.name, again)
		}
	}
	if hash == "" {
		return "", fmt.Errorf("the Namespace %s of the installation carries no %s: written by an older autonomy, or edited; %s", ns, AnnotationCompile, again)
	}
	if got := compileHash(objs); got != hash {
		return "", fmt.Errorf("the installation's objects hash to %s, not the %s its Namespace carries: a file was edited, dropped or added since the compile; %s", got, hash, again)
	}
	return hash, nil
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
// and an ask are never selected. It deletes nothing unless objs are a whole compile as compile
// wrote it (wholeCompile), every object of it is in the cluster, and the cluster's Namespace
// carries its hash (AnnotationCompile): run after the apply of that very compile, the namespace is
// never left unguarded, and a folder older (or newer) than the applied compile deletes nothing of
// what that compile wrote. Each delete carries the UID listed, so an object made anew meanwhile
// is left.
func Prune(ctx context.Context, cs *kubeclient.Client, objs []*unstructured.Unstructured) ([]Pruned, error) {
	ns := ""
	for _, o := range objs {
		if gk := o.GroupVersionKind().GroupKind(); gk.Kind == "Namespace" && gk.Group == "" {
			ns = o.GetName()
		}
	}
	if ns == "" {
		return nil, fmt.Errorf("the installation has no Namespace: not what compile writes (compile again); nothing was deleted")
	}
	hash, err := wholeCompile(objs, ns)
	if err != nil {
		return nil, err
	}
	installed := ""
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
		data, err := cs.Resource(m, on).Get(ctx, o.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the %s %s is not installed: apply the installation first (kubectl apply --server-side -k DIR/kubernetes); nothing was deleted", gvk.Kind, o.GetName())
		} else if err != nil {
			return nil, fmt.Errorf("reading the %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		if gvk.Kind == "Namespace" && gvk.Group == "" {
			var live struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal(data, &live); err != nil {
				return nil, fmt.Errorf("reading the Namespace %s: %w", ns, err)
			}
			installed = live.Metadata.Annotations[AnnotationCompile]
		}
		want[gvk.GroupKind()] = append(want[gvk.GroupKind()], o.GetName())
	}
	// Every object of this compile is installed; the cluster must also hold this very compile,
	// not a later one (a prune from an out-of-date folder would delete what the later compile
	// added) nor an earlier one.
	if installed != hash {
		shown := installed
		if len(shown) > len(hash) {
			shown = shown[:len(hash)] + "…" // an annotation may be long; a hash is not
		}
		was := "a compile of another hash (" + strconv.Quote(shown) + ")"
		if installed == "" {
			was = "no compile's hash (installed before autonomy wrote it)"
		}
		return nil, fmt.Errorf("the Namespace %s in the cluster carries %s, not this installation's %s: the cluster holds another compile than this folder's. Compile the current profile again (autonomy compile PROFILE --target kubernetes --dir DIR), apply it (kubectl apply --server-side -k DIR/kubernetes), then prune; nothing was deleted", ns, was, hash)
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
