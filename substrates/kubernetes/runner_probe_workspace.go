package kubernetes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/ir"
)

// The probe fleet's actors whose session processes the probe's kubelet runs, and how long the
// timeout check waits: overtime's timeout is a minute, its Job's activeDeadlineSeconds 60, which
// the Job controller enforces from the Job's start (its pod held pending: the process never
// starts, and the deadline counts all the same).
const (
	probeIsolated = "isolated"
	probeOvertime = "overtime"
	overtimeWait  = 2 * time.Minute
)

// Say what stood in for the cluster in the checks of a session's workspace and timeout.
const (
	workspaceFrom = "the session entry point ran in the pod the probe's kubelet played (a temp dir holding the pod's installation volume, writable here, read-only in a real pod); what the behavior reported there is read before the pod's dir is removed"
	// notProbedPrelaunch is why the prelaunch check (and the rest of what watches a process the
	// cluster runs) is not probed here.
	notProbedPrelaunch = "prelaunch is unsupported on Kubernetes: compile ignores it and the session's pod runs no command before the actor, so there is nothing to observe; a session's container is otherwise run by the cluster, not the Runner contract"
	// notProbedMerge is why merge-boundary is not probed here.
	notProbedMerge = "the Kubernetes runner has no code host: code:propose reaches a script as AUTONOMY_CAPABILITIES only, and no runner flow reviews or merges a proposal"
)

// workspaces records, for each session of the isolated actor the probe's kubelet ran, the
// workspace its behavior reported (where.sh: $AUTONOMY_DIR/.autonomy/state/probe/where-ID) and
// the installation root of its pod, which every session of the fleet shares.
type workspaces struct {
	mu    sync.Mutex
	where map[string][2]string // session: ran, root
}

// seen is the kubelet's podFiles: it reads the workspace the pod's session reported.
func (w *workspaces) seen(p *corev1.Pod, root string) {
	id := p.Labels[batchv1.JobNameLabel]
	data, err := bounded.ReadFile(filepath.Join(root, ".autonomy", "state", "probe", "where-"+id), 4096)
	if err != nil || id == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.where == nil {
		w.where = map[string][2]string{}
	}
	w.where[id] = [2]string{strings.TrimSpace(string(data)), root}
}

// workspace is a subject's Workspace: where session id ran, the shared root, and whether its
// workspace is gone now that the runner says it ended.
func (w *workspaces) workspace(r ir.Runner) func(context.Context, string) (string, string, bool, error) {
	return func(ctx context.Context, id string) (string, string, bool, error) {
		w.mu.Lock()
		got, ok := w.where[id]
		w.mu.Unlock()
		if !ok {
			return "", "", false, nil
		}
		s, _, err := r.Get(ctx, id)
		if err != nil || !s.Status.Ended() {
			return got[0], got[1], false, err
		}
		_, statErr := os.Stat(got[0])
		return got[0], got[1], errors.Is(statErr, os.ErrNotExist), nil
	}
}
