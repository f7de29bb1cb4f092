package kubernetes

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/autonomyhq/autonomy/ir"
)

// The human seam on Kubernetes. A launch of a person parks an ask: a ConfigMap of the fleet's
// namespace named by the session id ("a-" and 16 hex digits), labelled ComponentAsk, holding the
// actor, the ref, the params, its status and the SHA-256 of its one-time redeem token. The token
// itself is returned once, by the launch, and stored nowhere. Nothing marks an ask done by itself:
// only an update to done or failed quoting the token, with the evidence of the verified act,
// resolves it, by an update carrying the resourceVersion read, so of two resolutions one wins.
// Cancel retracts it. An ended ask keeps its record, so get reads how it ended.

// ComponentAsk is the LabelComponent value of an ask's ConfigMap.
const ComponentAsk = "ask"

// The keys of an ask's ConfigMap.
const (
	askActor, askRef, askParams, askStatus = "actor", "ref", "params", "status"
	askTokenHash, askEvidence, askVerified = "tokenHash", "evidence", "verified"
	// askEnded is when the operator's runner ended the ask (RFC 3339, nanoseconds): the ended
	// asks a full quota makes room from go in that order (reclaimAsks).
	askEnded = "ended"
)

// MaxAskRef and MaxAskParams bound an ask's subject and its params (as JSON): engage refuses
// more, and so does the ConfigMap admission policy, whoever parks it.
const (
	MaxAskRef    = 1 << 10
	MaxAskParams = 64 << 10
)

// MaxLaunchRef and MaxLaunchParams bound a session's ref and its params (as JSON) as an ask's are
// bound: the runner refuses more, and so does the launch admission policy (launchBounds) of a Job
// a session creates.
const (
	MaxLaunchRef    = MaxAskRef
	MaxLaunchParams = MaxAskParams
)

// isAskID reports whether id names an ask rather than a Job.
func isAskID(id string) bool { return strings.HasPrefix(id, "a-") }

// engage parks an ask to person a.
func (r *Runner) engage(ctx context.Context, a *RunnerActor, ref string, params ir.LaunchParams) (ir.Session, error) {
	var raw [8]byte
	var tok [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return ir.Session{}, err
	}
	if _, err := rand.Read(tok[:]); err != nil {
		return ir.Session{}, err
	}
	id, token := "a-"+hex.EncodeToString(raw[:]), "atk_"+hex.EncodeToString(tok[:])
	hash := hashToken(token)
	if r.opts.AskedBy != nil {
		// A session's ask carries no token (the admission policy refuses one): its model never
		// holds one; the operator mints one (NewAskToken).
		token, hash = "", ""
	}
	if params == nil {
		params = ir.LaunchParams{}
	}
	// The person's params as an agent's are checked (job): declared, not reserved.
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if why := ReservedParam(k); why != "" {
			return ir.Session{}, fmt.Errorf("launching %s: param %q is reserved: %s (give the param another name)", a.Name, k, why)
		}
		if !slices.Contains(a.Params, k) {
			return ir.Session{}, fmt.Errorf("launching %s: %s", a.Name, undeclaredParam(a.Name, k, a.Params))
		}
	}
	js, err := json.Marshal(params)
	if err != nil {
		return ir.Session{}, err
	}
	if len(ref) > MaxAskRef || len(js) > MaxAskParams {
		return ir.Session{}, fmt.Errorf("launching %s: an ask's subject is at most %d bytes and its params %d bytes as JSON (this one: %d and %d)", a.Name, MaxAskRef, MaxAskParams, len(ref), len(js))
	}
	lbl := ActorLabels(r.opts.Namespace, a.Name)
	lbl[LabelComponent] = ComponentAsk
	lbl[LabelSession] = id
	if by := r.opts.AskedBy; by != nil {
		lbl[LabelAskedBy] = ObjectName(by.Actor)
		if by.Session != "" {
			lbl[LabelAskedBySession] = by.Session
		}
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: r.opts.Namespace, Labels: lbl, Annotations: map[string]string{AnnotationActor: a.Name}},
		Data:       map[string]string{askActor: a.Name, askRef: ref, askParams: string(js), askStatus: string(ir.Running), askTokenHash: hash},
	}
	if err := r.reclaiming(ctx, configMapCountFull, r.reclaimAsks, func() error {
		_, err := r.opts.Client.CoreV1().ConfigMaps(r.opts.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	}); err != nil {
		return ir.Session{}, r.apiError("launching "+a.Name+": parking its ask "+id, "create configmaps", err)
	}
	s, err := r.askSession(cm)
	s.Token = token
	return s, err
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// getAsk gets the ConfigMap of ask id; nil without error when there is none of this fleet.
func (r *Runner) getAsk(ctx context.Context, id string) (*corev1.ConfigMap, error) {
	cm, err := r.opts.Client.CoreV1().ConfigMaps(r.opts.Namespace).Get(ctx, id, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, r.apiError("getting session "+id, "get configmaps", err)
	}
	if !r.isAsk(cm) {
		return nil, nil
	}
	return cm, nil
}

// isAsk reports whether cm is an ask of this fleet.
func (r *Runner) isAsk(cm *corev1.ConfigMap) bool {
	a := r.actors[cm.Data[askActor]]
	return a != nil && a.Human && isAskID(cm.Name) && cm.Labels[LabelFleet] == r.opts.Namespace &&
		cm.Labels[LabelComponent] == ComponentAsk && cm.Labels[LabelSession] == cm.Name
}

// asks lists the fleet's asks; a fleet without a person has none, and the API server is not
// asked (an agent:list Role grants no ConfigMaps).
func (r *Runner) asks(ctx context.Context) ([]corev1.ConfigMap, error) {
	if !slices.ContainsFunc(r.opts.Actors, func(a RunnerActor) bool { return a.Human }) {
		return nil, nil
	}
	sel := labels.SelectorFromSet(labels.Set{LabelFleet: r.opts.Namespace, LabelComponent: ComponentAsk}).String()
	list, err := r.opts.Client.CoreV1().ConfigMaps(r.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, r.apiError("listing asks", "list configmaps", err)
	}
	out := list.Items[:0]
	for _, cm := range list.Items {
		if r.isAsk(&cm) {
			out = append(out, cm)
		}
	}
	return out, nil
}

func (r *Runner) askSession(cm *corev1.ConfigMap) (ir.Session, error) {
	s := ir.Session{ID: cm.Name, Agent: cm.Data[askActor], Ref: cm.Data[askRef], Status: ir.SessionStatus(cm.Data[askStatus]), Params: ir.LaunchParams{}}
	if err := json.Unmarshal([]byte(cm.Data[askParams]), &s.Params); err != nil {
		s.Params = ir.LaunchParams{}
		return s, fmt.Errorf("ask %s: its params are not a JSON object of strings: %v", cm.Name, err)
	}
	r.askedParams(cm, s.Params)
	return s, nil
}

// askedParams reads the params of an ask a session parked (labelled LabelAskedBy, which the
// ConfigMap admission policy pins to the creating ServiceAccount) as a session's launch sets
// them, whatever its params field claims: each param the person's dispatch launch binds to
// subject.actor is the asking actor, to subject.actorRole NONE, to trigger.kind dispatch. An
// ask the operator parked is read as written.
func (r *Runner) askedParams(cm *corev1.ConfigMap, params ir.LaunchParams) {
	by, asked := cm.Labels[LabelAskedBy]
	a := r.actors[cm.Data[askActor]]
	if !asked || a == nil {
		return
	}
	value := map[string]string{"subject.actorRole": "NONE", "trigger.kind": string(ir.Dispatch)}
	for _, b := range r.opts.Actors {
		if ObjectName(b.Name) == by {
			value["subject.actor"] = b.Name
		}
	}
	for _, p := range a.Sources {
		if checkedSource(p.Source) {
			params[p.Name] = value[p.Source]
		}
	}
}

// updateAsk resolves (done or failed, with the token and evidence) or retracts (cancelled) an
// ask; anything less changes nothing.
// NewAskToken gives the open ask id a new one-time redeem token, which it returns (the old one no
// longer redeems it): the operator's only, for an ask whose token nobody holds (a session parked
// it: its model never reads the token) or was lost.
func (r *Runner) NewAskToken(ctx context.Context, id string) (string, error) {
	if r.opts.Caller != nil {
		return "", &DeniedError{Msg: "a new token for an ask is the operator's only: a session never holds a person's token"}
	}
	if !isAskID(id) {
		return "", &RefusedError{Msg: fmt.Sprintf("session %s is not an ask to a person: only an ask takes a token", id)}
	}
	var tok [32]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return "", err
	}
	token := "atk_" + hex.EncodeToString(tok[:])
	for {
		cm, err := r.getAsk(ctx, id)
		if err != nil {
			return "", err
		}
		if cm == nil {
			return "", &RefusedError{Msg: fmt.Sprintf("no ask %s in namespace %s", id, r.opts.Namespace)}
		}
		if st := ir.SessionStatus(cm.Data[askStatus]); st.Ended() {
			return "", &RefusedError{Msg: fmt.Sprintf("ask %s is %s: it takes no token", id, st)}
		}
		cm.Data[askTokenHash] = hashToken(token)
		_, err = r.opts.Client.CoreV1().ConfigMaps(r.opts.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
		switch {
		case err == nil:
			return token, nil
		case apierrors.IsConflict(err):
			continue // changed meanwhile: look again
		case apierrors.IsNotFound(err):
			return "", &RefusedError{Msg: fmt.Sprintf("no ask %s in namespace %s", id, r.opts.Namespace)}
		}
		return "", r.apiError("updating ask "+id, "update configmaps", err)
	}
}

func (r *Runner) updateAsk(ctx context.Context, id string, p ir.Patch) (bool, error) {
	switch p.Status {
	case ir.Cancelled:
	case ir.Done, ir.Failed:
		if p.Token == "" {
			return false, &RefusedError{Msg: "refused: resolving an ask needs its one-time redeem token (--token), which its launch returned"}
		}
		if strings.TrimSpace(p.Evidence) == "" {
			return false, &RefusedError{Msg: "refused: resolving an ask needs --evidence: the verified act that resolved it (a merged change, an approval's URL, the check that passed)"}
		}
		if p.Choice != "" || p.Answer != "" {
			return false, fmt.Errorf("resolving ask %s: %w: a typed ask's choice and answer are not on the Kubernetes runner", id, ir.ErrUnsupported)
		}
	default:
		return false, &RefusedError{Msg: fmt.Sprintf("session %s is an ask to a person: it can be resolved (done or failed, with its token and evidence) or cancelled, not %s", id, p.Status)}
	}
	for {
		cm, err := r.getAsk(ctx, id)
		if cm == nil || err != nil {
			return false, err
		}
		if err := r.authorize(map[bool]string{true: "cancel", false: "update"}[p.Status == ir.Cancelled], cm.Data[askActor]); err != nil {
			return false, err
		}
		if ir.SessionStatus(cm.Data[askStatus]).Ended() {
			return false, nil
		}
		if p.Status != ir.Cancelled && cm.Data[askTokenHash] == "" {
			return false, &RefusedError{Msg: fmt.Sprintf("refused: ask %s has no redeem token yet (a session parked it, and a session never holds one): mint one with `autonomy runner --target kubernetes update %s --new-token`, then resolve it with that token", id, id)}
		}
		if p.Status != ir.Cancelled && subtle.ConstantTimeCompare([]byte(hashToken(p.Token)), []byte(cm.Data[askTokenHash])) != 1 {
			return false, &RefusedError{Msg: "refused: the token does not redeem this ask"}
		}
		cm.Data[askStatus], cm.Data[askTokenHash] = string(p.Status), ""
		cm.Data[askEnded] = r.opts.Now().UTC().Format(time.RFC3339Nano)
		if p.Status != ir.Cancelled {
			cm.Data[askEvidence] = p.Evidence
			cm.Data[askVerified] = "redeem token and evidence, at " + r.opts.Now().UTC().Format(time.RFC3339)
		}
		_, err = r.opts.Client.CoreV1().ConfigMaps(r.opts.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case apierrors.IsConflict(err):
			continue // changed meanwhile: decide again on what it is now
		}
		return false, r.apiError("updating ask "+id, "update configmaps", err)
	}
}
