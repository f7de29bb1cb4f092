package kubeclient

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// request is what a test server saw of one request.
type request struct {
	Method, Path, Query, ContentType, Accept string
	Body                                     []byte
}

// recorder is an API server that records each request and answers reply's status and body.
func recorder(t *testing.T, reply func(*http.Request) (int, string, []byte)) (*httptest.Server, func() []request) {
	t.Helper()
	var mu sync.Mutex
	var seen []request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), r.Header.Get("Accept"), body})
		mu.Unlock()
		code, ctype, out := reply(r)
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(code)
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []request {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
}

func newClient(t *testing.T, host string) *Client {
	t.Helper()
	c, err := NewForConfig(&rest.Config{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRequestsAreClientGos: every method makes the request client-go's typed clientset makes for
// the same call: verb, path, query, content types and body, so the Roles compile writes for the
// runner's calls (and the API server's checks) hold unchanged.
func TestRequestsAreClientGos(t *testing.T) {
	srv, seen := recorder(t, func(*http.Request) (int, string, []byte) { return 200, "application/json", []byte("{}") })
	ours := newClient(t, srv.URL)
	theirs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fg, uid, rv, limit := metav1.DeletePropagationForeground, types.UID("u-1"), "42", int64(1<<20)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "s-1", Labels: map[string]string{"a": "b"}}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "slots", ResourceVersion: "7"}, Data: map[string]string{"k": "v"}}
	list := metav1.ListOptions{LabelSelector: "a=b,c=d", Limit: 500, Continue: "tok"}
	del := metav1.DeleteOptions{PropagationPolicy: &fg, Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}
	tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{"x"}}}
	calls := []struct {
		name         string
		ours, theirs func() error
	}{
		{"get configmap", func() error { _, err := ours.CoreV1().ConfigMaps("ns").Get(ctx, "x", metav1.GetOptions{}); return err },
			func() error {
				_, err := theirs.CoreV1().ConfigMaps("ns").Get(ctx, "x", metav1.GetOptions{})
				return err
			}},
		{"list configmaps", func() error { _, err := ours.CoreV1().ConfigMaps("ns").List(ctx, list); return err },
			func() error { _, err := theirs.CoreV1().ConfigMaps("ns").List(ctx, list); return err }},
		{"create configmap", func() error {
			_, err := ours.CoreV1().ConfigMaps("ns").Create(ctx, cm, metav1.CreateOptions{})
			return err
		},
			func() error {
				_, err := theirs.CoreV1().ConfigMaps("ns").Create(ctx, cm, metav1.CreateOptions{})
				return err
			}},
		{"update configmap", func() error {
			_, err := ours.CoreV1().ConfigMaps("ns").Update(ctx, cm, metav1.UpdateOptions{})
			return err
		},
			func() error {
				_, err := theirs.CoreV1().ConfigMaps("ns").Update(ctx, cm, metav1.UpdateOptions{})
				return err
			}},
		{"get podtemplate", func() error {
			_, err := ours.CoreV1().PodTemplates("ns").Get(ctx, "t", metav1.GetOptions{})
			return err
		},
			func() error {
				_, err := theirs.CoreV1().PodTemplates("ns").Get(ctx, "t", metav1.GetOptions{})
				return err
			}},
		{"list pods", func() error { _, err := ours.CoreV1().Pods("ns").List(ctx, list); return err },
			func() error { _, err := theirs.CoreV1().Pods("ns").List(ctx, list); return err }},
		{"list cronjobs", func() error { _, err := ours.BatchV1().CronJobs("ns").List(ctx, list); return err },
			func() error { _, err := theirs.BatchV1().CronJobs("ns").List(ctx, list); return err }},
		{"update pod status", func() error {
			_, err := ours.CoreV1().Pods("ns").UpdateStatus(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.UpdateOptions{})
			return err
		}, func() error {
			_, err := theirs.CoreV1().Pods("ns").UpdateStatus(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.UpdateOptions{})
			return err
		}},
		{"pod log", func() error {
			_, err := ours.CoreV1().Pods("ns").GetLogs("p", &corev1.PodLogOptions{Container: "agent", Follow: true, LimitBytes: &limit}).DoRaw(ctx)
			return err
		}, func() error {
			_, err := theirs.CoreV1().Pods("ns").GetLogs("p", &corev1.PodLogOptions{Container: "agent", Follow: true, LimitBytes: &limit}).DoRaw(ctx)
			return err
		}},
		{"create namespace", func() error {
			_, err := ours.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{}, metav1.CreateOptions{})
			return err
		},
			func() error {
				_, err := theirs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{}, metav1.CreateOptions{})
				return err
			}},
		{"delete namespace", func() error { return ours.CoreV1().Namespaces().Delete(ctx, "ns", metav1.DeleteOptions{}) },
			func() error { return theirs.CoreV1().Namespaces().Delete(ctx, "ns", metav1.DeleteOptions{}) }},
		{"token", func() error {
			_, err := ours.CoreV1().ServiceAccounts("ns").CreateToken(ctx, "sa", tr, metav1.CreateOptions{})
			return err
		},
			func() error {
				_, err := theirs.CoreV1().ServiceAccounts("ns").CreateToken(ctx, "sa", tr, metav1.CreateOptions{})
				return err
			}},
		{"create job", func() error {
			_, err := ours.BatchV1().Jobs("ns").Create(ctx, job, metav1.CreateOptions{FieldValidation: "Strict"})
			return err
		}, func() error {
			_, err := theirs.BatchV1().Jobs("ns").Create(ctx, job, metav1.CreateOptions{FieldValidation: "Strict"})
			return err
		}},
		{"get job", func() error { _, err := ours.BatchV1().Jobs("ns").Get(ctx, "s-1", metav1.GetOptions{}); return err },
			func() error { _, err := theirs.BatchV1().Jobs("ns").Get(ctx, "s-1", metav1.GetOptions{}); return err }},
		{"list jobs", func() error { _, err := ours.BatchV1().Jobs("ns").List(ctx, list); return err },
			func() error { _, err := theirs.BatchV1().Jobs("ns").List(ctx, list); return err }},
		{"delete job", func() error { return ours.BatchV1().Jobs("ns").Delete(ctx, "s-1", del) },
			func() error { return theirs.BatchV1().Jobs("ns").Delete(ctx, "s-1", del) }},
		{"patch job", func() error {
			_, err := ours.BatchV1().Jobs("ns").Patch(ctx, "s-1", types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{})
			return err
		}, func() error {
			_, err := theirs.BatchV1().Jobs("ns").Patch(ctx, "s-1", types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{})
			return err
		}},
	}
	for _, c := range calls {
		if err := c.theirs(); err != nil {
			t.Fatalf("%s, client-go: %v", c.name, err)
		}
		want := seen()
		if err := c.ours(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := seen()
		if len(got) != 1 || len(want) != 1 {
			t.Fatalf("%s: %d requests, client-go made %d; want 1", c.name, len(got), len(want))
		}
		g, w := got[0], want[0]
		if g.Method != w.Method || g.Path != w.Path || g.Query != w.Query || g.ContentType != w.ContentType || g.Accept != w.Accept || !bytes.Equal(g.Body, w.Body) {
			t.Errorf("%s:\n got  %s %s?%s (Content-Type %q, Accept %q) %q\n want %s %s?%s (Content-Type %q, Accept %q) %q", c.name,
				g.Method, g.Path, g.Query, g.ContentType, g.Accept, g.Body, w.Method, w.Path, w.Query, w.ContentType, w.Accept, w.Body)
		}
	}
}

// encode is obj as the API server sends it in content type ctype.
func encode(t *testing.T, ctype string, obj runtime.Object) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(theCodecs().negotiated.SupportedMediaTypes(), ctype)
	if !ok {
		t.Fatalf("no serializer for %s", ctype)
	}
	var b bytes.Buffer
	enc := runtime.WithVersionEncoder{Encoder: info.Serializer, ObjectTyper: theCodecs().scheme}
	if err := enc.Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestErrorsAreClassified: the API server's refusals reach the caller as the StatusErrors
// apierrors classifies (the runner's cancel retries a conflict, its claim takes an existing slots
// ConfigMap, a missing Job is no session), whether the server answers in protobuf or JSON, and a
// body that is no Status (a proxy's page) is classified by its HTTP status.
func TestErrorsAreClassified(t *testing.T) {
	statuses := []struct {
		reason metav1.StatusReason
		code   int
		is     func(error) bool
	}{
		{metav1.StatusReasonNotFound, 404, apierrors.IsNotFound},
		{metav1.StatusReasonAlreadyExists, 409, apierrors.IsAlreadyExists},
		{metav1.StatusReasonConflict, 409, apierrors.IsConflict},
		{metav1.StatusReasonForbidden, 403, apierrors.IsForbidden},
		{metav1.StatusReasonUnauthorized, 401, apierrors.IsUnauthorized},
		{metav1.StatusReasonInvalid, 422, apierrors.IsInvalid},
	}
	for _, ctype := range []string{"application/vnd.kubernetes.protobuf", "application/json"} {
		for _, s := range statuses {
			st := &metav1.Status{Status: metav1.StatusFailure, Reason: s.reason, Code: int32(s.code), Message: "jobs \"s-1\" " + string(s.reason)}
			body := encode(t, ctype, st)
			srv, _ := recorder(t, func(*http.Request) (int, string, []byte) { return s.code, ctype, body })
			c := newClient(t, srv.URL)
			_, err := c.BatchV1().Jobs("ns").Get(context.Background(), "s-1", metav1.GetOptions{})
			if !s.is(err) || !strings.Contains(err.Error(), string(s.reason)) {
				t.Errorf("%s %d %s: got %v (%T), want it classified %s with the server's message", ctype, s.code, s.reason, err, err, s.reason)
			}
		}
	}
	srv, _ := recorder(t, func(*http.Request) (int, string, []byte) {
		return 404, "text/html", []byte("<html>no such page</html>")
	})
	if err := newClient(t, srv.URL).CoreV1().Namespaces().Delete(context.Background(), "x", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a 404 page that is no Status: %v, want not found", err)
	}
	srv, _ = recorder(t, func(*http.Request) (int, string, []byte) { return 500, "text/plain", []byte("boom") })
	if _, err := newClient(t, srv.URL).CoreV1().ConfigMaps("ns").Get(context.Background(), "x", metav1.GetOptions{}); !apierrors.IsInternalError(err) || apierrors.IsNotFound(err) {
		t.Errorf("a 500 that is no Status: %v, want an internal error", err)
	}
}

// TestDecodesProtobuf: an object the API server sends in protobuf, as it does to a client that
// prefers it, is decoded whole.
func TestDecodesProtobuf(t *testing.T) {
	suspend := true
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "s-1", UID: "u-1", Annotations: map[string]string{"autonomy.dev/actor": "triage"}}, Spec: batchv1.JobSpec{Suspend: &suspend}}
	body := encode(t, "application/vnd.kubernetes.protobuf", job)
	srv, _ := recorder(t, func(*http.Request) (int, string, []byte) { return 200, "application/vnd.kubernetes.protobuf", body })
	got, err := newClient(t, srv.URL).BatchV1().Jobs("ns").Get(context.Background(), "s-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "s-1" || got.UID != "u-1" || got.Annotations["autonomy.dev/actor"] != "triage" || got.Spec.Suspend == nil || !*got.Spec.Suspend {
		t.Errorf("decoded %+v, want the Job sent", got)
	}
}

// TestMapperAsksTheAPIServer: a kind maps to the resource its group version serves, namespaced
// or not, asked once per group version; a kind it does not serve is a NoKindMatchError.
func TestMapperAsksTheAPIServer(t *testing.T) {
	lists := map[string]string{
		"/apis/rbac.authorization.k8s.io/v1": `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"rbac.authorization.k8s.io/v1","resources":[` +
			`{"name":"clusterroles","singularName":"clusterrole","namespaced":false,"kind":"ClusterRole","verbs":["get"]},` +
			`{"name":"roles","singularName":"role","namespaced":true,"kind":"Role","verbs":["get"]}]}`,
		"/api/v1": `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods/status","namespaced":true,"kind":"Pod","verbs":["get"]},` +
			`{"name":"pods","namespaced":true,"kind":"Pod","verbs":["get"]}]}`,
	}
	srv, seen := recorder(t, func(r *http.Request) (int, string, []byte) {
		if l, ok := lists[r.URL.Path]; ok {
			return 200, "application/json", []byte(l)
		}
		return 404, "text/plain", []byte("404 page not found")
	})
	m := newClient(t, srv.URL).Mapper()
	for _, c := range []struct {
		gk       schema.GroupKind
		resource string
		scope    meta.RESTScopeName
	}{
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, "roles", meta.RESTScopeNameNamespace},
		{schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, "clusterroles", meta.RESTScopeNameRoot},
		{schema.GroupKind{Kind: "Pod"}, "pods", meta.RESTScopeNameNamespace},
	} {
		got, err := m.RESTMapping(c.gk, "v1")
		if err != nil {
			t.Fatalf("%s: %v", c.gk, err)
		}
		if got.Resource.Resource != c.resource || got.Resource.Version != "v1" || got.Resource.Group != c.gk.Group || got.Scope.Name() != c.scope {
			t.Errorf("%s: %+v %s, want %s %s", c.gk, got.Resource, got.Scope.Name(), c.resource, c.scope)
		}
	}
	if n := len(seen()); n != 2 {
		t.Errorf("%d discovery requests for two group versions, want 2", n)
	}
	// The probe maps its objects from several goroutines at once: one request per group version.
	m = newClient(t, srv.URL).Mapper()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := m.RESTMapping(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, "v1"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(seen()); n != 1 {
		t.Errorf("%d discovery requests from 8 concurrent mappings of one group version, want 1", n)
	}
	if _, err := m.RESTMapping(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Nope"}, "v1"); !meta.IsNoMatchError(err) {
		t.Errorf("an unknown kind: %v, want no match", err)
	}
	if _, err := m.RESTMapping(schema.GroupKind{Group: "nope.example", Kind: "X"}, "v1"); err == nil || !strings.Contains(err.Error(), "/apis/nope.example/v1") {
		t.Errorf("an unknown group: %v, want an error naming what was asked", err)
	}
}

// TestUnstructuredRequestsAreDynamicClients: Resource's methods make the requests client-go's
// dynamic client makes for the same calls (the conformance probe's server-side apply of the
// probe fleet, and its deletes), namespaced and cluster-scoped, core group and named group.
func TestUnstructuredRequestsAreDynamicClients(t *testing.T) {
	srv, seen := recorder(t, func(*http.Request) (int, string, []byte) {
		return 200, "application/json", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`)
	})
	ours := newClient(t, srv.URL)
	theirs, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	force, fg := true, metav1.DeletePropagationForeground
	apply := metav1.PatchOptions{FieldManager: "autonomy-conformance", Force: &force, FieldValidation: "Strict"}
	obj := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"}}`)
	for _, m := range []struct {
		mapping *meta.RESTMapping
		ns      string
	}{
		{&meta.RESTMapping{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Scope: meta.RESTScopeNamespace}, "ns"},
		{&meta.RESTMapping{Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Scope: meta.RESTScopeRoot}, ""},
		{&meta.RESTMapping{Resource: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, Scope: meta.RESTScopeRoot}, ""},
		{&meta.RESTMapping{Resource: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, Scope: meta.RESTScopeNamespace}, "ns"},
	} {
		var ri dynamic.ResourceInterface = theirs.Resource(m.mapping.Resource)
		if m.ns != "" {
			ri = theirs.Resource(m.mapping.Resource).Namespace(m.ns)
		}
		mine := ours.Resource(m.mapping, m.ns)
		calls := []struct {
			name         string
			ours, theirs func() error
		}{
			{"apply", func() error { _, err := mine.Patch(ctx, "x", types.ApplyPatchType, obj, apply); return err },
				func() error { _, err := ri.Patch(ctx, "x", types.ApplyPatchType, obj, apply); return err }},
			{"merge patch", func() error {
				_, err := mine.Patch(ctx, "x", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
				return err
			},
				func() error {
					_, err := ri.Patch(ctx, "x", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
					return err
				}},
			{"get", func() error { _, err := mine.Get(ctx, "x", metav1.GetOptions{}); return err },
				func() error { _, err := ri.Get(ctx, "x", metav1.GetOptions{}); return err }},
			{"list", func() error { _, err := mine.List(ctx, metav1.ListOptions{LabelSelector: "a=b,c=d"}); return err },
				func() error { _, err := ri.List(ctx, metav1.ListOptions{LabelSelector: "a=b,c=d"}); return err }},
			{"delete", func() error { return mine.Delete(ctx, "x", metav1.DeleteOptions{}) },
				func() error { return ri.Delete(ctx, "x", metav1.DeleteOptions{}) }},
			{"delete foreground", func() error { return mine.Delete(ctx, "x", metav1.DeleteOptions{PropagationPolicy: &fg}) },
				func() error { return ri.Delete(ctx, "x", metav1.DeleteOptions{PropagationPolicy: &fg}) }},
		}
		for _, c := range calls {
			if err := c.theirs(); err != nil {
				t.Fatalf("%s %s, client-go: %v", c.name, m.mapping.Resource, err)
			}
			want := seen()
			if err := c.ours(); err != nil {
				t.Fatalf("%s %s: %v", c.name, m.mapping.Resource, err)
			}
			got := seen()
			if len(got) != 1 || len(want) != 1 {
				t.Fatalf("%s %s: %d requests, client-go made %d; want 1", c.name, m.mapping.Resource, len(got), len(want))
			}
			g, w := got[0], want[0]
			if g.Method != w.Method || g.Path != w.Path || g.Query != w.Query || g.ContentType != w.ContentType || g.Accept != w.Accept || !bytes.Equal(g.Body, w.Body) {
				t.Errorf("%s %s:\n got  %s %s?%s (Content-Type %q, Accept %q) %q\n want %s %s?%s (Content-Type %q, Accept %q) %q", c.name, m.mapping.Resource,
					g.Method, g.Path, g.Query, g.ContentType, g.Accept, g.Body, w.Method, w.Path, w.Query, w.ContentType, w.Accept, w.Body)
			}
		}
	}
	// An error is the API server's Status, classified as client-go's are.
	errSrv, _ := recorder(t, func(*http.Request) (int, string, []byte) {
		return 404, "application/json", []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"clusterroles \"x\" not found"}`)
	})
	m := &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}}
	if err := newClient(t, errSrv.URL).Resource(m, "").Delete(ctx, "x", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("delete of a missing object: %v, want NotFound", err)
	}
	if _, err := newClient(t, errSrv.URL).Resource(m, "").Patch(ctx, "x", types.ApplyPatchType, obj, apply); !apierrors.IsNotFound(err) {
		t.Errorf("patch of a missing object: %v, want NotFound", err)
	}
}
