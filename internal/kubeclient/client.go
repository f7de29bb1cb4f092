// Package kubeclient is autonomy's Kubernetes API client: the few typed resources its runner,
// its conformance probe and its session tools use (Jobs, Pods and their logs and status,
// PodTemplates, ConfigMaps, Namespaces, ServiceAccount tokens, and the CronJobs the
// conformance probe fires), over k8s.io/client-go/rest, with a scheme holding only those
// types, built on first use. client-go's typed clientset would register
// every Kubernetes API type at init, in every autonomy process, whether it talks to a cluster
// or not.
//
// Each resource offers the methods of client-go's typed client of the same name, with the
// same signatures and the same requests (verbs, paths, query parameters, bodies, content
// types: protobuf preferred, JSON accepted), so RBAC rules written for that client hold, and
// errors are the same *apierrors.StatusError: apierrors.IsNotFound, IsAlreadyExists,
// IsConflict, IsForbidden classify them.
package kubeclient

import (
	"context"
	"fmt"
	"net/http"

	authnv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Client talks to one API server. It is safe for concurrent use.
type Client struct {
	core, batch *rest.RESTClient
	mapper      *Mapper
}

// NewForConfig makes a client from c, as client-go's kubernetes.NewForConfig does: one HTTP
// client shared by every group, c's rate limiter (or one of c.QPS and c.Burst shared by every
// group; with neither, each group gets client-go's default), its user agent or client-go's.
func NewForConfig(c *rest.Config) (*Client, error) {
	cfg := *c
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	hc, err := rest.HTTPClientFor(&cfg)
	if err != nil {
		return nil, err
	}
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		if cfg.Burst <= 0 {
			return nil, fmt.Errorf("burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0")
		}
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	cl := &Client{}
	if cl.core, err = restClient(cfg, hc, "/api", corev1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	if cl.batch, err = restClient(cfg, hc, "/apis", batchv1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	cl.mapper = &Mapper{rc: cl.core, found: map[schema.GroupVersion]*metav1.APIResourceList{}}
	return cl, nil
}

// restClient is the REST client of group version gv under path.
func restClient(cfg rest.Config, hc *http.Client, path string, gv schema.GroupVersion) (*rest.RESTClient, error) {
	cfg.GroupVersion, cfg.APIPath = &gv, path
	cfg.NegotiatedSerializer = theCodecs().negotiated
	return rest.RESTClientForConfigAndClient(&cfg, hc)
}

// CoreV1 is the core group's version v1.
func (c *Client) CoreV1() CoreV1 { return CoreV1{c.core} }

// BatchV1 is the batch group's version v1.
func (c *Client) BatchV1() BatchV1 { return BatchV1{c.batch} }

// CoreV1 holds the resources of the core group's version v1.
type CoreV1 struct{ rc *rest.RESTClient }

// The resources by name.
type (
	// ConfigMaps are a namespace's ConfigMaps.
	ConfigMaps = Resource[*corev1.ConfigMap, *corev1.ConfigMapList]
	// PodTemplates are a namespace's PodTemplates.
	PodTemplates = Resource[*corev1.PodTemplate, *corev1.PodTemplateList]
	// Namespaces are the cluster's namespaces.
	Namespaces = Resource[*corev1.Namespace, *corev1.NamespaceList]
	// Jobs are a namespace's Jobs.
	Jobs = Resource[*batchv1.Job, *batchv1.JobList]
	// CronJobs are a namespace's CronJobs.
	CronJobs = Resource[*batchv1.CronJob, *batchv1.CronJobList]
)

// ConfigMaps are the ConfigMaps of namespace ns.
func (v CoreV1) ConfigMaps(ns string) *ConfigMaps {
	return newResource(v.rc, ns, "configmaps", func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, func() *corev1.ConfigMapList { return &corev1.ConfigMapList{} })
}

// PodTemplates are the PodTemplates of namespace ns.
func (v CoreV1) PodTemplates(ns string) *PodTemplates {
	return newResource(v.rc, ns, "podtemplates", func() *corev1.PodTemplate { return &corev1.PodTemplate{} }, func() *corev1.PodTemplateList { return &corev1.PodTemplateList{} })
}

// Namespaces are the cluster's namespaces.
func (v CoreV1) Namespaces() *Namespaces {
	return newResource(v.rc, "", "namespaces", func() *corev1.Namespace { return &corev1.Namespace{} }, func() *corev1.NamespaceList { return &corev1.NamespaceList{} })
}

// Pods are the pods of namespace ns.
func (v CoreV1) Pods(ns string) Pods {
	return Pods{newResource(v.rc, ns, "pods", func() *corev1.Pod { return &corev1.Pod{} }, func() *corev1.PodList { return &corev1.PodList{} })}
}

// ServiceAccounts are the ServiceAccounts of namespace ns.
func (v CoreV1) ServiceAccounts(ns string) ServiceAccounts {
	return ServiceAccounts{newResource(v.rc, ns, "serviceaccounts", func() *corev1.ServiceAccount { return &corev1.ServiceAccount{} }, func() *corev1.ServiceAccountList { return &corev1.ServiceAccountList{} })}
}

// BatchV1 holds the resources of the batch group's version v1.
type BatchV1 struct{ rc *rest.RESTClient }

// Jobs are the Jobs of namespace ns.
func (v BatchV1) Jobs(ns string) *Jobs {
	return newResource(v.rc, ns, "jobs", func() *batchv1.Job { return &batchv1.Job{} }, func() *batchv1.JobList { return &batchv1.JobList{} })
}

// CronJobs are the CronJobs of namespace ns.
func (v BatchV1) CronJobs(ns string) *CronJobs {
	return newResource(v.rc, ns, "cronjobs", func() *batchv1.CronJob { return &batchv1.CronJob{} }, func() *batchv1.CronJobList { return &batchv1.CronJobList{} })
}

// Pods are a namespace's pods, and their logs.
type Pods struct {
	*Resource[*corev1.Pod, *corev1.PodList]
}

// GetLogs is the request for the log of pod name (pods/log), as client-go's: Stream it, or Do.
func (p Pods) GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request {
	return p.rc.Get().Namespace(p.namespace).Name(name).Resource("pods").SubResource("log").VersionedParams(opts, theCodecs().params)
}

// ServiceAccounts are a namespace's ServiceAccounts, and their tokens.
type ServiceAccounts struct {
	*Resource[*corev1.ServiceAccount, *corev1.ServiceAccountList]
}

// CreateToken requests a token of ServiceAccount name (serviceaccounts/token).
func (s ServiceAccounts) CreateToken(ctx context.Context, name string, req *authnv1.TokenRequest, opts metav1.CreateOptions) (*authnv1.TokenRequest, error) {
	out := &authnv1.TokenRequest{}
	err := s.rc.Post().UseProtobufAsDefault().Namespace(s.namespace).Resource("serviceaccounts").Name(name).SubResource("token").
		VersionedParams(&opts, theCodecs().params).Body(req).Do(ctx).Into(out)
	return out, err
}
