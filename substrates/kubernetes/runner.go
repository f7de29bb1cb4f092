package kubernetes

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/autonomyhq/autonomy/internal/kubeclient"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Client talks to the API server (Connect.Client makes one from a kubeconfig).
	Client *kubeclient.Client
	// Namespace is where the fleet is installed: its Jobs, pods and slots live there.
	Namespace string
	// Actors are the fleet's actors. Each one's Job is built from its PodTemplate in the
	// namespace (contract.go), read at every launch.
	Actors []RunnerActor
	// MaxConcurrent caps the agents' sessions in flight across every launcher (0: no cap).
	MaxConcurrent int
	// Caller, when set, is the actor calling from inside one of its sessions: each verb is
	// checked against its capabilities before the API server is asked (which checks them again,
	// through the actor's ServiceAccount). CallerActor is its actor's name: subject.actor of the
	// sessions it launches.
	Caller      *substrates.Caller
	CallerActor string
	// AskedBy, when set, is who parks asks from inside a session's pod (OpenRunner reads it
	// from the pod's env): each ask is labelled with them, as the fleet's ConfigMap admission
	// policy requires of a request with a fleet ServiceAccount's token.
	AskedBy *Asker
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Asker is the actor and session of a pod that parks an ask.
type Asker struct {
	// Actor is the asking actor's name; Session its session's id (its Job's name).
	Actor, Session string
}

// RunnerActor is one actor of the fleet, as the runner launches it.
type RunnerActor struct {
	Name string
	// Human marks a person: a launch of one parks an ask (runner_asks.go), not a Job.
	Human bool
	// Result is the actor's result contract, a JSON Schema document; nil when it declares none
	// (then a session that succeeds is done without a result).
	Result any
	// Params are the param names the actor declares (every trigger's, cron ones included): a
	// launch may set these and no other, as on local, and get reads back these from a session's
	// env.
	Params []string
	// Sources are the params a launch resolves from its firing (LaunchFiring): its dispatch
	// trigger's, each with its source.
	Sources []Param
}

// Runner realizes the Runner contract over Kubernetes: a session is a Job built from its actor's
// PodTemplate (SessionJob), named by the session id. It keeps nothing in memory: every verb reads the
// cluster, so any process with the same options sees the same sessions. It is safe for
// concurrent use.
//
// A Job maps to a session status so: Complete is done when its pod's result satisfies the
// actor's contract and failed otherwise, even if marked cancelled; Failed is failed unless marked
// cancelled (AnnotationCancelled); marked cancelled, or being deleted before it ended, is
// cancelled; suspended is paused; anything else is running.
type Runner struct {
	opts   RunnerOptions
	actors map[string]*RunnerActor
	names  []string
}

var _ ir.Runner = (*Runner)(nil)

// NewRunner checks opts and returns a runner; it makes no request.
func NewRunner(opts RunnerOptions) (*Runner, error) {
	var problems []string
	if opts.Client == nil {
		problems = append(problems, "no client: give a kubeconfig (--kubeconfig, $KUBECONFIG) or run in a cluster")
	}
	if errs := validation.IsDNS1123Label(opts.Namespace); len(errs) > 0 {
		problems = append(problems, fmt.Sprintf("namespace %q: %s", opts.Namespace, strings.Join(errs, "; ")))
	}
	if opts.MaxConcurrent < 0 {
		problems = append(problems, fmt.Sprintf("maxConcurrent %d cannot be negative", opts.MaxConcurrent))
	}
	r := &Runner{opts: opts, actors: map[string]*RunnerActor{}}
	for i := range opts.Actors {
		a := &opts.Actors[i]
		if r.actors[a.Name] != nil {
			problems = append(problems, fmt.Sprintf("actor %q is named twice", a.Name))
		}
		r.actors[a.Name] = a
		r.names = append(r.names, a.Name)
	}
	if len(opts.Actors) == 0 {
		problems = append(problems, "no actors: the fleet's installation names none")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("kubernetes runner: %s", strings.Join(problems, "; "))
	}
	if r.opts.Now == nil {
		r.opts.Now = time.Now
	}
	return r, nil
}

// DeniedError is a verb the caller's capabilities do not allow.
type DeniedError struct{ Msg string }

func (e *DeniedError) Error() string { return "denied: " + e.Msg }

// RefusedError is a launch the runner refuses as the standard says it must: beyond
// maxConcurrent.
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

func (r *Runner) authorize(verb, actor string) error {
	if r.opts.Caller == nil {
		return nil
	}
	if why := r.opts.Caller.Authorize(verb, actor); why != "" {
		return &DeniedError{Msg: why}
	}
	return nil
}

// Launch starts a session of agent with params, verbatim.
func (r *Runner) Launch(ctx context.Context, agent string, params ir.LaunchParams) (ir.Session, error) {
	return r.LaunchRef(ctx, agent, "", params)
}

// LaunchRef starts a session of agent on the subject ref (kept in the Job's annotation), fired
// with ref alone (LaunchFiring).
func (r *Runner) LaunchRef(ctx context.Context, agent, ref string, params ir.LaunchParams) (ir.Session, error) {
	return r.LaunchFiring(ctx, agent, Firing{Ref: ref}, params)
}

// launch starts a session of agent on the subject ref, with params, resolved already, as its
// containers' environment, verbatim: never interpolated into a command.
func (r *Runner) launch(ctx context.Context, agent, ref string, params ir.LaunchParams) (ir.Session, error) {
	a := r.actors[agent]
	if a == nil {
		return ir.Session{}, fmt.Errorf("launching %q in namespace %s: not an actor of this fleet (%s)", agent, r.opts.Namespace, ir.Suggest(agent, r.names))
	}
	if err := r.authorize("launch", agent); err != nil {
		return ir.Session{}, err
	}
	if a.Human {
		return r.engage(ctx, a, ref, params)
	}
	var raw [8]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return ir.Session{}, fmt.Errorf("launching %s: making a session id: %w", agent, err)
	}
	id := "s-" + hex.EncodeToString(raw[:])
	job, err := r.job(ctx, a, id, ref, params)
	if err != nil {
		return ir.Session{}, err
	}
	release, err := r.claim(ctx, id)
	if err != nil {
		return ir.Session{}, err
	}
	created, err := r.createJob(ctx, job)
	if err != nil {
		release()
		return ir.Session{}, r.apiError(fmt.Sprintf("launching %s: creating Job %s", agent, id), "create jobs", err)
	}
	return r.session(ctx, created, false)
}

// job is the Job of session id of actor a, built from a's PodTemplate as the contract says.
func (r *Runner) job(ctx context.Context, a *RunnerActor, id, ref string, params ir.LaunchParams) (*batchv1.Job, error) {
	obj := ObjectName(a.Name)
	pt, err := r.opts.Client.CoreV1().PodTemplates(r.opts.Namespace).Get(ctx, obj, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("launching %s: no PodTemplate %s in namespace %s: is the fleet installed there (kubectl apply -k)?", a.Name, obj, r.opts.Namespace)
	}
	if err != nil {
		return nil, r.apiError("launching "+a.Name+": reading its PodTemplate "+obj, "get podtemplates/"+obj, err)
	}
	t := JobTemplate(pt)
	var c *corev1.Container
	for i := range t.Spec.Template.Spec.Containers {
		if t.Spec.Template.Spec.Containers[i].Name == ContainerName {
			c = &t.Spec.Template.Spec.Containers[i]
		}
	}
	if c == nil {
		return nil, fmt.Errorf("launching %s: its PodTemplate %s has no container %q (compile and apply again)", a.Name, obj, ContainerName)
	}
	taken := map[string]bool{EnvRef: true, EnvParams: true}
	for _, e := range c.Env {
		taken[e.Name] = true
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if taken[k] {
			return nil, fmt.Errorf("launching %s: param %s is reserved: the session's container sets it (give the param another name)", a.Name, k)
		}
		if why := ReservedParam(k); why != "" {
			return nil, fmt.Errorf("launching %s: param %q is reserved: %s (give the param another name)", a.Name, k, why)
		}
		if !slices.Contains(a.Params, k) {
			return nil, fmt.Errorf("launching %s: %s", a.Name, undeclaredParam(a.Name, k, a.Params))
		}
	}
	if js, _ := json.Marshal(params); len(ref) > MaxLaunchRef || len(js) > MaxLaunchParams {
		return nil, fmt.Errorf("launching %s: a session's ref is at most %d bytes and its params %d bytes as JSON (this one: %d and %d)", a.Name, MaxLaunchRef, MaxLaunchParams, len(ref), len(js))
	}
	// The result is what the session's container writes to its termination message file,
	// never the tail of its log.
	c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	return SessionJob(r.opts.Namespace, t, Session{ID: id, Ref: ref, Params: params}), nil
}

// Get returns a session; ok is false for an id that is no session id, or no Job of this fleet.
func (r *Runner) Get(ctx context.Context, id string) (ir.Session, bool, error) {
	if isAskID(id) {
		cm, err := r.getAsk(ctx, id)
		if cm == nil || err != nil || !r.inScope(cm.Data[askActor]) {
			return ir.Session{}, false, err
		}
		s, err := r.askSession(cm)
		return s, err == nil, err
	}
	job, err := r.getJob(ctx, id)
	if job == nil || err != nil {
		return ir.Session{}, false, err
	}
	if !r.inScope(actorOf(job)) {
		return ir.Session{}, false, nil
	}
	s, err := r.session(ctx, job, true)
	return s, err == nil, err
}

// inScope reports whether the caller's agent:list lets it see actor's sessions.
func (r *Runner) inScope(actor string) bool {
	if r.opts.Caller == nil {
		return true
	}
	scope := r.opts.Caller.ListScope()
	return scope == "" || scope == actor
}

// getJob gets the Job of session id; nil without error when there is none of this fleet.
func (r *Runner) getJob(ctx context.Context, id string) (*batchv1.Job, error) {
	if !isSessionID(id) || isAskID(id) {
		return nil, nil
	}
	job, err := r.opts.Client.BatchV1().Jobs(r.opts.Namespace).Get(ctx, id, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, r.apiError("getting session "+id, "get jobs", err)
	}
	if !r.ours(job) {
		return nil, nil
	}
	return job, nil
}

// ours reports whether j is a session of this fleet: a session Job of the namespace's fleet, of
// one of its actors.
func (r *Runner) ours(j *batchv1.Job) bool {
	return j.Labels[LabelFleet] == r.opts.Namespace && j.Labels[LabelComponent] == ComponentSession &&
		j.Labels[LabelActor] == ObjectName(actorOf(j)) && r.actors[actorOf(j)] != nil
}

// actorOf is the actor a session's Job is of, by its name verbatim.
func actorOf(j *batchv1.Job) string { return j.Annotations[AnnotationActor] }

// List returns the sessions in flight (running or paused), by id.
func (r *Runner) List(ctx context.Context) ([]ir.Session, error) {
	if err := r.authorize("list", ""); err != nil {
		return nil, err
	}
	jobs, err := r.jobs(ctx)
	if err != nil {
		return nil, err
	}
	out := []ir.Session{}
	for i := range jobs {
		j := &jobs[i]
		if !r.inScope(actorOf(j)) {
			continue
		}
		if st, _ := jobStatus(j); st.Ended() {
			continue
		}
		s, err := r.session(ctx, j, false)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	asks, err := r.asks(ctx) // none asked for when the fleet has no person
	if err != nil {
		return nil, err
	}
	for i := range asks {
		// An ask whose params do not read is listed without them (get names what is wrong), so
		// one bad ask does not hide the fleet's sessions.
		s, _ := r.askSession(&asks[i])
		if !s.Status.Ended() && r.inScope(s.Agent) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b ir.Session) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// jobs lists the fleet's Jobs: those labelled with one of its actors and a session id.
func (r *Runner) jobs(ctx context.Context) ([]batchv1.Job, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelFleet: r.opts.Namespace, LabelComponent: ComponentSession}).String()
	var out []batchv1.Job
	opts := metav1.ListOptions{LabelSelector: sel, Limit: 500}
	for {
		page, err := r.opts.Client.BatchV1().Jobs(r.opts.Namespace).List(ctx, opts)
		if err != nil {
			return nil, r.apiError("listing sessions", "list jobs", err)
		}
		for _, j := range page.Items {
			if r.ours(&j) {
				out = append(out, j)
			}
		}
		if page.Continue == "" {
			return out, nil
		}
		opts.Continue = page.Continue
	}
}

// jobStatus maps a Job to a session status; done stands for "complete": the result decides. An
// end the Job reached comes first: Complete is done though a cancel marked it (its pod finished
// before the cancel took effect), and Failed is failed unless the Job is marked cancelled (the
// admission policy admits the mark only on a Job that has not ended, so a marked Job's failure is
// the cancel's or came with it); a Job being deleted (its ttlSecondsAfterFinished, once ended)
// keeps its end.
func jobStatus(j *batchv1.Job) (ir.SessionStatus, string) {
	at, marked := j.Annotations[AnnotationCancelled]
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch {
		case c.Type == batchv1.JobComplete:
			return ir.Done, ""
		case c.Type == batchv1.JobFailed && !marked:
			return ir.Failed, strings.TrimSpace(c.Reason + ": " + c.Message)
		}
	}
	if marked {
		// The mark is the time of the cancel; any other text is not shown as one.
		if t, err := time.Parse(time.RFC3339, at); err == nil {
			return ir.Cancelled, "cancelled at " + t.UTC().Format(time.RFC3339)
		}
		return ir.Cancelled, "cancelled"
	}
	if j.DeletionTimestamp != nil {
		return ir.Cancelled, "cancelled: its Job is being deleted"
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return ir.Paused, ""
	}
	return ir.Running, ""
}

// session maps a Job to its session; verify reads a complete Job's result to say done or failed
// (List skips ended sessions and need not).
func (r *Runner) session(ctx context.Context, j *batchv1.Job, verify bool) (ir.Session, error) {
	s := ir.Session{ID: j.Name, Agent: actorOf(j), Params: ir.LaunchParams{}}
	s.Ref, s.Params = r.launched(j)
	s.Status, s.Reason = jobStatus(j)
	if s.Status == ir.Done && verify {
		st, why, err := r.verify(ctx, j)
		if err != nil {
			return s, err
		}
		s.Status, s.Reason = st, why
	}
	if !s.Status.Ended() {
		s.Reason = "" // a session in flight has no reason yet
	}
	return s, nil
}

// launched are the ref and params of the session j runs, read from its session container's env
// (the entries the admission policy vetted when a fleet ServiceAccount created the Job, and the
// process reads), never from the Job's annotations (which a session creating its own Job could
// forge): EnvRef, and each entry named like a param the actor declares (the last, as the kubelet
// takes it). The runner's own launches set the same values in both.
func (r *Runner) launched(j *batchv1.Job) (string, ir.LaunchParams) {
	ref, params := "", ir.LaunchParams{}
	var declared []string
	if a := r.actors[actorOf(j)]; a != nil {
		declared = a.Params
	}
	for _, c := range j.Spec.Template.Spec.Containers {
		if c.Name != ContainerName {
			continue
		}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom != nil:
			case e.Name == EnvRef:
				ref = e.Value
			case slices.Contains(declared, e.Name) && ReservedParam(e.Name) == "":
				params[e.Name] = e.Value
			}
		}
	}
	return ref, params
}

// Cancel stops a session and keeps it readable as cancelled: it marks the session's Job
// (AnnotationCancelled), scales it to no pod (parallelism 0: the Job controller deletes its pods
// and makes none again) and ends it (activeDeadlineSeconds 1, resumed if it was paused: the Job
// controller fails it at once), so that its ttlSecondsAfterFinished (keepFinished) removes it
// later, as any ended session's. It is false for an unknown session, one that has ended, or one
// whose cancel another caller won.
func (r *Runner) Cancel(ctx context.Context, id string) (bool, error) {
	if isAskID(id) {
		return r.updateAsk(ctx, id, ir.Patch{Status: ir.Cancelled})
	}
	for {
		job, err := r.getJob(ctx, id)
		if job == nil || err != nil {
			return false, err
		}
		if err := r.authorize("cancel", actorOf(job)); err != nil {
			return false, err
		}
		if st, _ := jobStatus(job); st.Ended() || ending(job) {
			return false, nil // ended or ending, or another cancel won
		}
		// The patch carries the resourceVersion read: after a change meanwhile (the Job
		// controller's status, a concurrent cancel, an end) it is a conflict, and the cancel is
		// decided again on the Job as it is now.
		err = r.patchJob(ctx, id, cancelPatch(job.ResourceVersion, r.opts.Now()))
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case apierrors.IsConflict(err):
			continue
		}
		return false, r.apiError("cancelling session "+id, "patch jobs", err)
	}
}

// ending reports whether the Job controller has decided j's end (FailureTarget or
// SuccessCriteriaMet) and waits for its pods to terminate before it says Failed or Complete: a
// cancel then would rewrite that end as cancelled, and the admission policy refuses it.
func ending(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobFailureTarget || c.Type == batchv1.JobSuccessCriteriaMet) {
			return true
		}
	}
	return false
}

// cancelPatch is the merge patch that cancels the Job at resourceVersion rv (see Cancel); the
// fleet's admission policy lets agent:cancel make this change and no other.
func cancelPatch(rv string, now time.Time) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"resourceVersion": rv, "annotations": map[string]any{AnnotationCancelled: now.UTC().Format(time.RFC3339)}},
		"spec":     map[string]any{"suspend": false, "parallelism": 0, "activeDeadlineSeconds": 1},
	}
}

// patchJob applies a JSON merge patch to the Job named id.
func (r *Runner) patchJob(ctx context.Context, id string, patch map[string]any) error {
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = r.opts.Client.BatchV1().Jobs(r.opts.Namespace).Patch(ctx, id, types.MergePatchType, body, metav1.PatchOptions{})
	return err
}

// Update pauses (suspends the Job, which deletes its running pods) or resumes a session, or
// cancels it. A Job ends done or failed by itself, so those are refused as unsupported; a
// person's ask is resolved done or failed only with its redeem token and evidence.
func (r *Runner) Update(ctx context.Context, id string, patch ir.Patch) (bool, error) {
	if isAskID(id) {
		return r.updateAsk(ctx, id, patch)
	}
	switch patch.Status {
	case ir.Cancelled:
		return r.Cancel(ctx, id)
	case ir.Paused, ir.Running:
		return r.suspend(ctx, id, patch.Status == ir.Paused)
	case ir.Done, ir.Failed:
		return false, fmt.Errorf("updating session %s to %s: %w: a Job ends done or failed by itself (cancel it to stop it)", id, patch.Status, ir.ErrUnsupported)
	}
	return false, fmt.Errorf("updating session %s: unknown status %q (one of: running, paused, cancelled, done, failed)", id, patch.Status)
}

func (r *Runner) suspend(ctx context.Context, id string, pause bool) (bool, error) {
	for {
		job, err := r.getJob(ctx, id)
		if job == nil || err != nil {
			return false, err
		}
		if err := r.authorize("update", actorOf(job)); err != nil {
			return false, err
		}
		st, _ := jobStatus(job)
		if st.Ended() || (st == ir.Paused) == pause {
			return false, nil
		}
		// The patch carries the resourceVersion read: a change meanwhile is a conflict, and the
		// transition is decided again on the Job as it is now.
		err = r.patchJob(ctx, id, map[string]any{"metadata": map[string]any{"resourceVersion": job.ResourceVersion}, "spec": map[string]any{"suspend": pause}})
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case apierrors.IsConflict(err):
			continue
		}
		return false, r.apiError("updating session "+id, "patch jobs", err)
	}
}

// apiError says what failed, and for a refusal by the API server, what the caller's identity
// lacks.
func (r *Runner) apiError(what, need string, err error) error {
	switch {
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota") && strings.Contains(err.Error(), "count/jobs.batch"):
		return &RefusedError{Msg: fmt.Sprintf("%s: the namespace's ResourceQuota %s holds no more Jobs (finished sessions' Jobs count until keepFinished removes them, or the operator's launch deletes the oldest; a session's launch cannot): delete finished Jobs, or raise policy.box.kubernetes.maxJobs, compile and apply: %v", what, QuotaName, err)}
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota") && strings.Contains(err.Error(), "count/configmaps"):
		return &RefusedError{Msg: fmt.Sprintf("%s: the namespace's ResourceQuota %s holds no more ConfigMaps (asks, ended ones included, count until deleted, or until the operator's ask deletes the oldest ended; a session's ask cannot): delete ended asks, or raise policy.box.kubernetes.maxAsks, compile and apply: %v", what, QuotaName, err)}
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota"):
		return &RefusedError{Msg: fmt.Sprintf("%s: the namespace's ResourceQuota %s is full (its pods are the sessions in flight): wait for one to end, or cancel one: %v", what, QuotaName, err)}
	case apierrors.IsForbidden(err):
		return &DeniedError{Msg: fmt.Sprintf("%s in namespace %s: the API server refused it (its identity needs %s there): %v", what, r.opts.Namespace, need, err)}
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: the API server does not accept this identity (check the kubeconfig's credentials): %w", what, err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s in namespace %s: %w", what, r.opts.Namespace, err)
}

// undeclaredParam is local's refusal of a param actor declares not (declared are its params).
func undeclaredParam(actor, k string, declared []string) string {
	hint := "it declares no params"
	if len(declared) > 0 {
		hint = ir.Suggest(k, declared)
	}
	return fmt.Sprintf("actor %q declares no param %q (%s)", actor, k, hint)
}

// declaredParams are the param names an actor's triggers declare, each once, in order.
func declaredParams(triggers []Trigger) []string {
	var out []string
	for _, t := range triggers {
		for _, p := range t.Params {
			if !slices.Contains(out, p.Name) {
				out = append(out, p.Name)
			}
		}
	}
	return out
}
