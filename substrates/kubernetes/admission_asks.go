package kubernetes

import (
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The labels an ask parked from inside a session's pod carries besides an ask's own: who asked.
const (
	// LabelAskedBy is ObjectName of the actor whose session parked the ask (its ServiceAccount).
	LabelAskedBy = "autonomy.dev/asked-by"
	// LabelAskedBySession is the id of the session that parked it (its Job's name).
	LabelAskedBySession = "autonomy.dev/asked-by-session"
	// podNameExtra is the user-info extra the API server gives a pod-bound ServiceAccount token
	// (every token a pod mounts): the pod's name.
	podNameExtra = "authentication.kubernetes.io/pod-name"
)

// ConfigMapPolicyName is the name of the fleet's ValidatingAdmissionPolicy on ConfigMaps and its
// binding (clusterName).
func ConfigMapPolicyName(ns string) string { return clusterName(ns, "configmaps") }

// humans are the names of the profile's people.
func (c *compiler) humans() []string {
	var out []string
	for _, a := range c.p.Actors {
		if a.IsHuman() {
			out = append(out, a.Name.Value)
		}
	}
	return out
}

// configMapAdmission is the ValidatingAdmissionPolicy that narrows what RBAC cannot on the
// ConfigMaps of the namespace, for every request one of the fleet's ServiceAccounts makes: a
// create is an ask (runner_asks.go) of a person its agent:launch scope reaches, still running,
// labelled with the asking actor (its ServiceAccount) and, from a pod, the asking session (the
// pod's Job), with no redeem token (the operator mints one), and nothing else: no other
// ConfigMap, no resolution written in; an update is of the
// slots ConfigMap only, adding at most one claim and changing none it keeps (runner_slots.go):
// an ask is resolved by the operator's runner with its token, never by a session; no delete.
func (c *compiler) configMapAdmission() (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	ns := c.box.Namespace
	prefix := "system:serviceaccount:" + ns + ":"
	fail := admissionv1.Fail
	var askers, people []string
	for _, a := range c.p.Actors {
		if a.IsHuman() {
			people = append(people, ObjectName(a.Name.Value)+"="+a.Name.Value)
			continue
		}
		for _, cp := range a.Capabilities {
			if cp.Name != "agent:launch" || !reachesHuman(cp.Scope, c.humans()) {
				continue
			}
			target := "*"
			if cp.Scope != "" {
				target = ObjectName(cp.Scope)
			}
			askers = append(askers, ObjectName(a.Name.Value)+"/"+target)
		}
	}
	extra := "request.userInfo.extra"
	vap := &admissionv1.ValidatingAdmissionPolicy{TypeMeta: typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: ConfigMapPolicyName(ns), Labels: FleetLabels(ns)},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete},
				Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			MatchConditions: []admissionv1.MatchCondition{{Name: "fleet-service-account", Expression: "request.userInfo.username.startsWith(" + celString(prefix) + ")"}},
			Variables: []admissionv1.Variable{
				{Name: "sa", Expression: "request.userInfo.username.substring(" + strconv.Itoa(len(prefix)) + ")"},
				{Name: "pod", Expression: "has(" + extra + ") && " + celString(podNameExtra) + " in " + extra + " && size(" + extra + "[" + celString(podNameExtra) + "]) == 1 ? " + extra + "[" + celString(podNameExtra) + "][0] : ''"},
				{Name: "labels", Expression: "request.operation != 'DELETE' && has(object.metadata.labels) ? object.metadata.labels : {}"},
				{Name: "annotations", Expression: "request.operation != 'DELETE' && has(object.metadata.annotations) ? object.metadata.annotations : {}"},
				{Name: "data", Expression: "request.operation != 'DELETE' && has(object.data) ? object.data : {}"},
			},
			Validations: []admissionv1.Validation{
				{Expression: "request.operation != 'DELETE'", Message: "a fleet ServiceAccount deletes no ConfigMap"},
				{Expression: "request.operation != 'UPDATE' || (object.metadata.name == " + celString(SlotsConfigMap) + " && " + slotsShape() + ")",
					Message: "a fleet ServiceAccount updates only the slots ConfigMap " + SlotsConfigMap + ", adding at most one claim (a session id and when it was claimed) and changing no claim it keeps; an ask is resolved by the operator's runner with its token"},
				{Expression: "request.operation != 'CREATE' || " + askShape(ns, askers, people),
					Message: "a fleet ServiceAccount creates only an ask (a-<16 hex digits>) to a person its agent:launch scope reaches, still running, with no redeem token (tokenHash empty: the operator mints one with update --new-token), its subject at most " + strconv.Itoa(MaxAskRef) + " bytes and its params " + strconv.Itoa(MaxAskParams) + ", labelled with its own actor (" + LabelAskedBy + ") and, from a pod, its own session (" + LabelAskedBySession + "), and no other ConfigMap"},
			},
		}}
	binding := policyBinding(ns, ConfigMapPolicyName(ns))
	return vap, binding
}

// slotsShape is the CEL condition an update of the slots ConfigMap meets: only its data changes,
// every claim is a launched session's id and an RFC 3339 time, a claim it keeps is
// unchanged, and at most one is new. Claims may go (their sessions ended, or they lapsed): the
// namespace's ResourceQuota bounds the pods a launcher that drops live claims could start.
func slotsShape() string {
	var conds []string
	for _, f := range []string{"labels", "annotations", "finalizers", "ownerReferences", "binaryData", "immutable"} {
		path := "metadata." + f
		if f == "binaryData" || f == "immutable" {
			path = f
		}
		conds = append(conds, "has(object."+path+") == has(oldObject."+path+") && (!has(object."+path+") || object."+path+" == oldObject."+path+")")
	}
	old := "(has(oldObject.data) ? oldObject.data : {})"
	conds = append(conds,
		"variables.data.all(k, k.matches('^s-[0-9a-f]{16}$') && variables.data[k].matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\\\.[0-9]{1,9})?Z$'))",
		"variables.data.all(k, !(k in "+old+") || variables.data[k] == "+old+"[k])",
		"size(variables.data.filter(k, !(k in "+old+"))) <= 1",
	)
	return "(" + strings.Join(conds, ") && (") + ")"
}

// askShape is the CEL condition a created ConfigMap meets: an ask, as engage writes it, to a
// person asker may launch (askers: "SA/person" or "SA/*"; people: "ObjectName=name"), naming the
// asking ServiceAccount and, when the request comes from a pod, that pod's Job.
func askShape(ns string, askers, people []string) string {
	lbl := func(k string) string { return "variables.labels[" + celString(k) + "]" }
	ann := "variables.annotations[" + celString(AnnotationActor) + "]"
	conds := []string{
		"object.metadata.name.matches('^a-[0-9a-f]{16}$')",
		"!has(object.metadata.generateName) && !has(object.metadata.finalizers) && !has(object.metadata.ownerReferences) && !has(object.binaryData) && !has(object.immutable)",
		"variables.labels.all(k, k in " + celList([]string{LabelFleet, LabelManaged, LabelActor, LabelComponent, LabelSession, LabelAskedBy, LabelAskedBySession}) + ")",
		"variables.annotations.all(k, k == " + celString(AnnotationActor) + ")",
		"variables.data.all(k, k in " + celList([]string{askActor, askRef, askParams, askStatus, askTokenHash}) + ")",
	}
	for _, k := range []string{LabelFleet, LabelManaged, LabelActor, LabelComponent, LabelSession, LabelAskedBy} {
		conds = append(conds, celString(k)+" in variables.labels")
	}
	for _, k := range []string{askActor, askRef, askParams, askStatus, askTokenHash} {
		conds = append(conds, celString(k)+" in variables.data")
	}
	conds = append(conds,
		celString(AnnotationActor)+" in variables.annotations",
		lbl(LabelFleet)+" == "+celString(ns),
		lbl(LabelManaged)+" == "+celString(ManagedBy),
		lbl(LabelComponent)+" == "+celString(ComponentAsk),
		lbl(LabelSession)+" == object.metadata.name",
		lbl(LabelAskedBy)+" == variables.sa",
		lbl(LabelActor)+" + '=' + "+ann+" in "+celList(people),
		"variables.data["+celString(askActor)+"] == "+ann,
		"variables.sa + '/' + "+lbl(LabelActor)+" in "+celList(askers)+" || variables.sa + '/*' in "+celList(askers),
		"variables.data["+celString(askStatus)+"] == 'running'",
		// No redeem token: a session never holds one (its model would), so it may not choose
		// one either; the operator mints one (NewAskToken, update --new-token).
		"variables.data["+celString(askTokenHash)+"] == ''",
		// Bounded in bytes as engage bounds them (a CEL string's size counts code points, up to
		// four bytes each): a session cannot park asks that fill the store.
		"size(bytes(variables.data["+celString(askRef)+"])) <= "+strconv.Itoa(MaxAskRef)+" && size(bytes(variables.data["+celString(askParams)+"])) <= "+strconv.Itoa(MaxAskParams),
		// From a pod, the asking session is the pod's Job: its pod is named the Job's name, a
		// dash and five characters. Without a pod (a ServiceAccount token not bound to one), no
		// session is named.
		"variables.pod == '' ? !("+celString(LabelAskedBySession)+" in variables.labels) : ("+celString(LabelAskedBySession)+" in variables.labels && variables.pod.startsWith("+lbl(LabelAskedBySession)+" + '-') && size(variables.pod) == size("+lbl(LabelAskedBySession)+") + 6)",
	)
	return "(" + strings.Join(conds, ") && (") + ")"
}

// policyBinding binds the fleet's admission policy name to the requests on namespace ns, denying
// what it refuses.
func policyBinding(ns, name string) *admissionv1.ValidatingAdmissionPolicyBinding {
	return &admissionv1.ValidatingAdmissionPolicyBinding{TypeMeta: typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: FleetLabels(ns)},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources:    &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}}}}
}
