package kubeclient

import (
	"sync"

	authnv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// codecs are the scheme of the types this client reads and writes, and its serializers.
type codecs struct {
	scheme     *runtime.Scheme
	negotiated runtime.NegotiatedSerializer
	params     runtime.ParameterCodec
}

// theCodecs registers the few types the client uses, on first use: client-go's clientset
// registers every Kubernetes API type at init, in every process that links it.
var theCodecs = sync.OnceValue(func() *codecs {
	s := runtime.NewScheme()
	groups := []struct {
		gv    schema.GroupVersion
		types []runtime.Object
	}{
		{corev1.SchemeGroupVersion, []runtime.Object{
			&corev1.ConfigMap{}, &corev1.ConfigMapList{}, &corev1.Pod{}, &corev1.PodList{},
			&corev1.PodTemplate{}, &corev1.PodTemplateList{}, &corev1.Namespace{}, &corev1.NamespaceList{},
			&corev1.ServiceAccount{}, &corev1.ServiceAccountList{}, &corev1.PodLogOptions{},
		}},
		{batchv1.SchemeGroupVersion, []runtime.Object{&batchv1.Job{}, &batchv1.JobList{}, &batchv1.CronJob{}, &batchv1.CronJobList{}}},
		{authnv1.SchemeGroupVersion, []runtime.Object{&authnv1.TokenRequest{}}},
	}
	// As client-go's scheme: each group's version holds the options of its requests
	// (ListOptions, DeleteOptions, ...) and Status (an error's body), the core group's first.
	for _, g := range groups {
		s.AddKnownTypes(g.gv, g.types...)
		metav1.AddToGroupVersion(s, g.gv)
	}
	return &codecs{
		scheme:     s,
		negotiated: rest.CodecFactoryForGeneratedClient(s, serializer.NewCodecFactory(s)).WithoutConversion(),
		params:     runtime.NewParameterCodec(s),
	}
})
