package kubeclient

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Unstructured is a resource of any kind, found by the Mapper, whose objects travel as JSON: the
// requests client-go's dynamic client makes for the same calls (JSON both ways, the options in
// the query of version v1, DeleteOptions in the body), without linking that client, whose
// packages' init every autonomy process would run.
type Unstructured struct {
	rc   *rest.RESTClient
	path []string // the resource's path segments: api/VERSION or apis/GROUP/VERSION, [namespaces/NS,] RESOURCE
}

// Resource is mapping's resource in namespace ns ("" for a cluster-scoped one), as client-go's
// dynamic.Interface.Resource(mapping.Resource).Namespace(ns).
func (c *Client) Resource(mapping *meta.RESTMapping, ns string) *Unstructured {
	r := mapping.Resource
	path := []string{"apis", r.Group, r.Version}
	if r.Group == "" {
		path = []string{"api", r.Version}
	}
	if ns != "" {
		path = append(path, "namespaces", ns)
	}
	return &Unstructured{rc: c.core, path: append(path, r.Resource)}
}

// at is the path of the object name.
func (u *Unstructured) at(name string) []string {
	return append(append([]string(nil), u.path...), name)
}

// Patch patches the object name with data, a patch of type pt (types.ApplyPatchType: a
// server-side apply), and returns the object the API server answers, as JSON.
func (u *Unstructured) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) ([]byte, error) {
	if name == "" {
		return nil, fmt.Errorf("name is required")
	}
	return u.rc.Patch(pt).AbsPath(u.at(name)...).Body(data).
		SpecificallyVersionedParams(&opts, theCodecs().params, schema.GroupVersion{Version: "v1"}).
		SetHeader("Accept", "application/json").Do(ctx).Raw()
}

// Delete deletes the object name, opts in the body.
func (u *Unstructured) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if name == "" {
		return fmt.Errorf("name is required")
	}
	opts.Kind, opts.APIVersion = "DeleteOptions", metav1.SchemeGroupVersion.Version
	body, err := json.Marshal(&opts)
	if err != nil {
		return err
	}
	return u.rc.Delete().AbsPath(u.at(name)...).Body(append(body, '\n')). // as apimachinery's JSON serializer ends it
										SetHeader("Content-Type", "application/json").SetHeader("Accept", "application/json").Do(ctx).Error()
}

// Get reads the object name, as JSON.
func (u *Unstructured) Get(ctx context.Context, name string, opts metav1.GetOptions) ([]byte, error) {
	if name == "" {
		return nil, fmt.Errorf("name is required")
	}
	return u.rc.Get().AbsPath(u.at(name)...).
		SpecificallyVersionedParams(&opts, theCodecs().params, schema.GroupVersion{Version: "v1"}).
		SetHeader("Accept", "application/json").Do(ctx).Raw()
}

// List lists the objects opts selects, as JSON.
func (u *Unstructured) List(ctx context.Context, opts metav1.ListOptions) ([]byte, error) {
	return u.rc.Get().AbsPath(u.path...).
		SpecificallyVersionedParams(&opts, theCodecs().params, schema.GroupVersion{Version: "v1"}).
		SetHeader("Accept", "application/json").Do(ctx).Raw()
}
