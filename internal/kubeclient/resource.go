package kubeclient

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Object is a Kubernetes object of a resource.
type Object interface {
	runtime.Object
	GetName() string
}

// Resource is one resource of a namespace (or of the cluster, for a cluster-scoped one): T its
// objects, L their list. Its methods make the requests client-go's typed client makes.
type Resource[T Object, L runtime.Object] struct {
	rc                  *rest.RESTClient
	namespace, resource string
	newObject           func() T
	newList             func() L
}

func newResource[T Object, L runtime.Object](rc *rest.RESTClient, ns, resource string, obj func() T, list func() L) *Resource[T, L] {
	return &Resource[T, L]{rc: rc, namespace: ns, resource: resource, newObject: obj, newList: list}
}

// on makes req a request on the resource, protobuf preferred as client-go's typed clients do
// for built-in types.
func (r *Resource[T, L]) on(req *rest.Request) *rest.Request {
	return req.UseProtobufAsDefault().NamespaceIfScoped(r.namespace, r.namespace != "").Resource(r.resource)
}

// Get reads the object name.
func (r *Resource[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := r.newObject()
	err := r.on(r.rc.Get()).Name(name).VersionedParams(&opts, theCodecs().params).Do(ctx).Into(out)
	return out, err
}

// List lists the objects opts select (one page of them when opts.Limit is set).
func (r *Resource[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out := r.newList()
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	err := r.on(r.rc.Get()).VersionedParams(&opts, theCodecs().params).Timeout(timeout).Do(ctx).Into(out)
	return out, err
}

// Create creates obj.
func (r *Resource[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := r.newObject()
	err := r.on(r.rc.Post()).VersionedParams(&opts, theCodecs().params).Body(obj).Do(ctx).Into(out)
	return out, err
}

// Update replaces obj (a conflict when its resourceVersion is not the stored one's).
func (r *Resource[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := r.newObject()
	err := r.on(r.rc.Put()).Name(obj.GetName()).VersionedParams(&opts, theCodecs().params).Body(obj).Do(ctx).Into(out)
	return out, err
}

// UpdateStatus replaces obj's status subresource, as client-go's UpdateStatus does.
func (r *Resource[T, L]) UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := r.newObject()
	err := r.on(r.rc.Put()).Name(obj.GetName()).SubResource("status").VersionedParams(&opts, theCodecs().params).Body(obj).Do(ctx).Into(out)
	return out, err
}

// Delete deletes the object name, opts (propagation policy, preconditions) in the body.
func (r *Resource[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return r.on(r.rc.Delete()).Name(name).Body(&opts).Do(ctx).Error()
}

// Patch patches the object name (or its subresource) with data, a patch of type pt.
func (r *Resource[T, L]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	out := r.newObject()
	err := r.on(r.rc.Patch(pt)).Name(name).SubResource(subresources...).
		VersionedParams(&opts, theCodecs().params).Body(data).Do(ctx).Into(out)
	return out, err
}
