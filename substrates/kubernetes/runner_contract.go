package kubernetes

import (
	"k8s.io/apimachinery/pkg/util/validation"
)

// What the runner adds to the shared contract (contract.go). A session is a Job of the fleet's
// namespace labelled LabelComponent=ComponentSession: its name is the session id (a launch names
// it "s-" and 16 hex digits; a CronJob names its own), AnnotationActor says whose it is, and its
// session container's termination message is its result (runner_result.go).
const (
	// SlotsConfigMap is the ConfigMap of the namespace that holds the claims of the sessions in
	// flight, updated by compare-and-swap on its resourceVersion (maxConcurrent). A launcher
	// needs get, create and update on it.
	SlotsConfigMap = "autonomy-slots"
	// MaxResultBytes is the most the kubelet keeps of a container's termination message, the
	// result: a result of this size or more may have been cut, and is refused.
	MaxResultBytes = 4096
)

// isSessionID reports whether id can name a session: a Job name, which is a DNS label. Anything
// else is no session, and the API server is not asked.
func isSessionID(id string) bool {
	return len(validation.IsDNS1123Label(id)) == 0
}
