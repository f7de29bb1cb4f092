package kubernetes

import (
	"context"
	"errors"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/autonomyhq/autonomy/internal/kubeclient"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// TestServiceAccountBoundsTheRunner: with an actor's ServiceAccount's own token and the Role
// compile gives its capabilities (agent:list only), the runner lists and gets, and a launch or a
// cancel that skips the caller-side check is refused by the API server, as denied.
func TestServiceAccountBoundsTheRunner(t *testing.T) {
	cs, kubeconfig := ClusterClient(t)
	ns := ClusterNamespace(t, cs)
	InstallTemplates(t, cs, HeldPodTemplate(ns, "probe"))
	ctx := context.Background()
	admin, err := NewRunner(RunnerOptions{Client: RunnerClient(t), Namespace: ns, Actors: []RunnerActor{{Name: "probe", Params: []string{"P"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := admin.Launch(ctx, "probe", ir.LaunchParams{"P": "x"})
	if err != nil {
		t.Fatal(err)
	}
	pmcs := actorClient(t, cs, kubeconfig, ns, "pm", []string{"agent:list"}, false)
	r, err := NewRunner(RunnerOptions{Client: pmcs, Namespace: ns, Actors: []RunnerActor{{Name: "probe", Params: []string{"P"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if ss, err := r.List(ctx); err != nil || len(ss) != 1 || ss[0].ID != s.ID {
		t.Errorf("list as pm: %v %v", ss, err)
	}
	if g, ok, err := r.Get(ctx, s.ID); err != nil || !ok || g.Params["P"] != "x" {
		t.Errorf("get as pm: %+v %v %v", g, ok, err)
	}
	var denied *DeniedError
	if _, err := r.Launch(ctx, "probe", nil); !errors.As(err, &denied) {
		t.Errorf("launch as pm (agent:list only): %v, want denied by the API server", err)
	}
	if _, err := r.Cancel(ctx, s.ID); !errors.As(err, &denied) {
		t.Errorf("cancel as pm (agent:list only): %v, want denied by the API server", err)
	}
	if got, ok, _ := admin.Get(ctx, s.ID); !ok || got.Status != ir.Running {
		t.Errorf("the session after pm's refused cancel: %+v %v", got, ok)
	}
}

// actorClient creates actor's ServiceAccount with the Role compile gives caps (capped: the fleet
// has a maxConcurrent) and returns the runner's client acting with a token of that ServiceAccount.
func actorClient(t *testing.T, cs kubernetes.Interface, kubeconfig, ns, actor string, caps []string, capped bool) *kubeclient.Client {
	t.Helper()
	ctx := context.Background()
	a := &ir.Actor{Name: ir.String{Value: actor}, Capabilities: substrates.ParseCapabilities(caps)}
	mustCreate(t, func() error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: actor}}, metav1.CreateOptions{})
		return err
	}, func() error {
		_, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: actor}, Rules: rules(a, []string{"probe"}, nil, capped)}, metav1.CreateOptions{})
		return err
	}, func() error {
		_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: actor},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: actor},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: actor, Namespace: ns}}}, metav1.CreateOptions{})
		return err
	})
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, actor, &authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	as := rest.AnonymousClientConfig(cfg)
	as.BearerToken = tok.Status.Token
	waitGranted(t, as, ns, rules(a, []string{"probe"}, nil, capped))
	return runnerClient(t, as)
}

// waitGranted waits until the API server's authorizer, whose cache of Roles and RoleBindings
// trails their creation, grants what the config's user was just given (each rule's first verb
// on its first resource): a request sooner may be forbidden though the binding exists.
func waitGranted(t *testing.T, as *rest.Config, ns string, granted []rbacv1.PolicyRule) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(as)
	for _, rule := range granted {
		if len(rule.Verbs) == 0 || len(rule.Resources) == 0 {
			continue
		}
		attrs := &authzv1.ResourceAttributes{Namespace: ns, Verb: rule.Verbs[0], Resource: rule.Resources[0]}
		if len(rule.APIGroups) > 0 {
			attrs.Group = rule.APIGroups[0]
		}
		if len(rule.ResourceNames) > 0 {
			attrs.Name = rule.ResourceNames[0]
		}
		Eventually(t, 30*time.Second, "the Role's grant of "+attrs.Verb+" "+attrs.Resource+" takes effect", func() (bool, error) {
			r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(),
				&authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}, metav1.CreateOptions{})
			return err == nil && r.Status.Allowed, nil
		})
	}
}

// TestServiceAccountLaunchesUnderMaxConcurrent: with a launcher's own ServiceAccount token and
// the Role compile gives agent:launch in a fleet with a maxConcurrent (whose slots ConfigMap
// compile installs), a launch claims its slot and creates its Job, and the launch past the cap
// is refused by the runner, not Forbidden by the API server (before, the Role granted neither
// the slots ConfigMap nor the list of the Jobs in flight).
func TestServiceAccountLaunchesUnderMaxConcurrent(t *testing.T) {
	cs, kubeconfig := ClusterClient(t)
	ns := ClusterNamespace(t, cs)
	InstallTemplates(t, cs, HeldPodTemplate(ns, "probe"))
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SlotsConfigMap}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	boss := actorClient(t, cs, kubeconfig, ns, "boss", []string{"agent:launch"}, true)
	r, err := NewRunner(RunnerOptions{Client: boss, Namespace: ns, MaxConcurrent: 1, Actors: []RunnerActor{{Name: "probe", Params: []string{"P"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Launch(ctx, "probe", ir.LaunchParams{"P": "x"})
	if err != nil {
		t.Fatalf("launch as boss under maxConcurrent: %v", err)
	}
	if _, err := cs.BatchV1().Jobs(ns).Get(ctx, s.ID, metav1.GetOptions{}); err != nil {
		t.Errorf("the Job of the launch as boss: %v", err)
	}
	var refused *RefusedError
	if _, err := r.Launch(ctx, "probe", nil); !errors.As(err, &refused) {
		t.Errorf("the launch past maxConcurrent 1 as boss: %v, want refused by the runner", err)
	}
}

func mustCreate(t *testing.T, creates ...func() error) {
	t.Helper()
	for _, c := range creates {
		if err := c(); err != nil {
			t.Fatal(err)
		}
	}
}
