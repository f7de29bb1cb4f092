package kubeclient

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// discoveryTimeout bounds one discovery request.
const discoveryTimeout = 30 * time.Second

// Mapper maps a kind to its resource by asking the API server which resources a group version
// serves (GET /api/v1, /apis/GROUP/VERSION), once per group version: what client-go's
// discovery RESTMapper does for a kind of a given version. It is safe for concurrent use.
type Mapper struct {
	rc    *rest.RESTClient
	mu    sync.Mutex
	found map[schema.GroupVersion]*metav1.APIResourceList
}

// Mapper is the client's kind-to-resource mapper.
func (c *Client) Mapper() *Mapper { return c.mapper }

// RESTMapping is the resource of kind gk in the first of versions (a version is required), and
// whether it is namespaced.
func (m *Mapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) == 0 || versions[0] == "" {
		return nil, fmt.Errorf("mapping kind %s: no version given", gk)
	}
	gv := schema.GroupVersion{Group: gk.Group, Version: versions[0]}
	list, err := m.resources(gv)
	if err != nil {
		return nil, err
	}
	for _, r := range list.APIResources {
		if r.Kind != gk.Kind || strings.Contains(r.Name, "/") { // a subresource has its parent's kind
			continue
		}
		scope := meta.RESTScopeRoot
		if r.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		return &meta.RESTMapping{Resource: gv.WithResource(r.Name), GroupVersionKind: gv.WithKind(gk.Kind), Scope: scope}, nil
	}
	return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions[:1]}
}

// resources are the resources the API server serves in gv, asked once.
func (m *Mapper) resources(gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if list := m.found[gv]; list != nil {
		return list, nil
	}
	path := "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	ctx, cancel := context.WithTimeout(context.Background(), discoveryTimeout)
	defer cancel()
	list := &metav1.APIResourceList{}
	if err := m.rc.Get().AbsPath(path).Do(ctx).Into(list); err != nil {
		return nil, fmt.Errorf("discovering the resources of %s (GET %s): %w", gv, path, err)
	}
	m.found[gv] = list
	return list, nil
}
