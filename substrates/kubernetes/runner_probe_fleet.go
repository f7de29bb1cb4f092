package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/autonomyhq/autonomy/internal/kubeclient"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
)

// The behavioral checks that call the runner from inside a session (scope-refused, agent-verbs)
// need the probe fleet installed as compile makes it: each actor's ServiceAccount, Role and
// PodTemplate, and the fleet's admission policies. installProbeFleet compiles the battery's probe
// fleet into the subject's namespace, its pods held pending (heldSelector, through
// policy.box.kubernetes.nodeSelector, so the admission policy admits the held template), and
// applies it as kubectl apply --server-side does; a session's runner then acts with a token of
// its actor's ServiceAccount, which the API server bounds by the Role compile gave it.

// installProbeFleet installs the probe fleet env compiles into namespace ns, and returns what
// removes its cluster-scoped objects (the namespace's are deleted with it).
func installProbeFleet(ctx context.Context, cfg *rest.Config, env substrates.ProbeEnv, ns string) (func(context.Context), error) {
	objs, err := compileProbeFleet(env, ns)
	if err != nil {
		return nil, err
	}
	return applyObjects(ctx, cfg, objs)
}

// compileProbeFleet compiles the probe fleet env writes for namespace ns, its pods held.
func compileProbeFleet(env substrates.ProbeEnv, ns string) ([]*unstructured.Unstructured, error) {
	scratch, err := os.MkdirTemp("", "autonomy-k8s-probe-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	prof, _, err := env.CompileFleet(scratch)
	if err != nil {
		return nil, fmt.Errorf("writing the probe fleet: %w", err)
	}
	irPath := filepath.Join(prof, "ir.yml")
	data, err := os.ReadFile(irPath)
	if err != nil {
		return nil, err
	}
	box := "  box:\n    kubernetes: { namespace: " + ns + ", nodeSelector: { " + strings.Join(keys(heldSelector), ", ") + " } }\n"
	if !strings.Contains(string(data), "\n  box:\n") {
		return nil, fmt.Errorf("the probe fleet %s has no policy.box to add the kubernetes box to", irPath)
	}
	if err := os.WriteFile(irPath, []byte(strings.Replace(string(data), "\n  box:\n", "\n"+box, 1)), 0o644); err != nil {
		return nil, err
	}
	p, diags, err := ir.Check(prof)
	if err == nil && diags.HasErrors() {
		err = diags
	}
	if err != nil {
		return nil, fmt.Errorf("the probe fleet for namespace %s: %w", ns, err)
	}
	out, err := Substrate{}.Compile(resolved.Of(p)) // the probe fleet holds no playbook
	if err != nil {
		return nil, fmt.Errorf("compiling the probe fleet: %w", err)
	}
	return Objects(out)
}

// applyObjects applies objs as kubectl apply --server-side does (strict field validation): the
// namespace first, then the others, a few at a time. It returns what deletes the cluster-scoped
// objects it applied but the namespace.
func applyObjects(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) (func(context.Context), error) {
	dc, err := kubeclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := dc.Mapper()
	var mu sync.Mutex
	var global []func(context.Context)
	drop := func(ctx context.Context) {
		for _, d := range global {
			d(ctx)
		}
	}
	force := true
	apply := func(o *unstructured.Unstructured) error {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
		}
		namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
		ns := ""
		if namespaced {
			ns = o.GetNamespace()
		}
		ri := dc.Resource(m, ns)
		if !namespaced && gvk.Kind != "Namespace" {
			name := o.GetName()
			mu.Lock()
			global = append(global, func(ctx context.Context) { _ = ri.Delete(ctx, name, metav1.DeleteOptions{}) })
			mu.Unlock()
		}
		js, err := o.MarshalJSON()
		if err == nil {
			_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, js, metav1.PatchOptions{FieldManager: "autonomy-conformance", Force: &force, FieldValidation: "Strict"})
		}
		if err != nil {
			return fmt.Errorf("applying %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		return nil
	}
	var errs []error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			if err := apply(o); err != nil {
				return nil, err
			}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := apply(o); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		drop(ctx)
		return nil, err
	}
	return drop, nil
}

// keys is the selector as YAML flow entries, in order.
func keys(sel map[string]string) []string {
	var out []string
	for k, v := range sel {
		out = append(out, k+": "+v)
	}
	slices.Sort(out)
	return out
}

// sessionRunner is the runner as a process in session id calls it: acting with a token of the
// session's actor's ServiceAccount (which the API server bounds by its Role and the admission
// policies), its verbs checked against the actor's capabilities first, the installation read as
// the pod has it mounted.
func sessionRunner(ctx context.Context, cfg *rest.Config, admin *kubeclient.Client, ns, id string) (*Runner, error) {
	job, err := admin.BatchV1().Jobs(ns).Get(ctx, id, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	actor := job.Annotations[AnnotationActor]
	exp := int64((10 * time.Minute).Seconds())
	tok, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, ObjectName(actor), &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token of %s's ServiceAccount: %w", actor, err)
	}
	as := rest.AnonymousClientConfig(cfg)
	as.BearerToken = tok.Status.Token
	cs, err := kubeclient.NewForConfig(as)
	if err != nil {
		return nil, err
	}
	r, err := openRunner(ctx, cs, admin, ns, actor)
	if err != nil {
		return nil, err
	}
	// The token is not bound to the session's pod (it is held pending, never started): an
	// ask from it names no session.
	r.opts.AskedBy.Session = ""
	return r, nil
}

// withSessions sets the hooks of the checks that call the runner from inside a session on s:
// AsSession, and Fire (as the operator, or from inside a session) with the firing's context.
func withSessions(s *substrates.ProbeSubject, cfg *rest.Config, admin *kubeclient.Client, ns string) {
	s.AsSession = func(ctx context.Context, id string) (ir.Runner, error) {
		return sessionRunner(ctx, cfg, admin, ns, id)
	}
	s.Fire = func(ctx context.Context, actor string, f substrates.Firing) (ir.Session, error) {
		r := s.Runner.(*Runner)
		if f.Session != "" {
			var err error
			if r, err = sessionRunner(ctx, cfg, admin, ns, f.Session); err != nil {
				return ir.Session{}, err
			}
		}
		return r.LaunchFiring(ctx, actor, Firing{Ref: f.Ref, Text: f.Text, From: f.From, Kind: f.Kind}, f.Params)
	}
}
