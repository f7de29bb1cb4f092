package kubernetes

import (
	"reflect"

	"github.com/autonomyhq/autonomy/ir"
	"slices"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The fleet's cluster-scoped objects (its ValidatingAdmissionPolicies and their bindings) are
// named "autonomy-NAMESPACE." and what they are of: a namespace is a DNS label and an actor's
// object name has no dot either, so the first dot ends the namespace and no two fleets' names,
// nor two of one fleet's, are the same (autonomy-team-launch-x-sessions was both fleet
// "team"'s launches of x-sessions and fleet "team-launch-x"'s policy on Jobs).
func clusterName(ns, what string) string { return "autonomy-" + ns + "." + what }

// AdmissionPolicyName is the name of the fleet's ValidatingAdmissionPolicy on Jobs and its binding.
func AdmissionPolicyName(ns string) string { return clusterName(ns, "sessions") }

// LaunchPolicyName is the name of the ValidatingAdmissionPolicy, and its binding, of the launches
// of the actor whose object name is object (launchAdmission).
func LaunchPolicyName(ns, object string) string { return clusterName(ns, "launch-"+object) }

// admission is the ValidatingAdmissionPolicy that narrows what RBAC cannot: for every request on
// a Job of the namespace made by one of the fleet's ServiceAccounts, a create is of an actor the
// launcher's agent:launch scope names and has the shape of that actor's template (its
// ServiceAccount, the fleet's image and SessionArgs, only the installation mounted, no secret
// read, no host namespace, no added container), an update (cancel, suspend) is of a Job of an
// actor the agent:cancel or agent:update scope names, and no delete is admitted (RBAC grants none
// either; the operator's and the TTL controller's deletes are not a fleet ServiceAccount's). Jobs the CronJob controller
// creates are not a fleet ServiceAccount's and are not matched.
func (c *compiler) admission() (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	ns := c.box.Namespace
	prefix := "system:serviceaccount:" + ns + ":"
	fail := admissionv1.Fail
	pairs := map[string][]string{}
	for _, a := range c.p.Actors {
		for _, cp := range a.Capabilities {
			// An unscoped verb reaches every actor: "SA/*", one entry, so the policy grows
			// linearly with the actors.
			target := "*"
			if cp.Scope != "" {
				target = ObjectName(cp.Scope)
			}
			pairs[cp.Name] = append(pairs[cp.Name], ObjectName(a.Name.Value)+"/"+target)
		}
	}
	vap := &admissionv1.ValidatingAdmissionPolicy{TypeMeta: typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: AdmissionPolicyName(ns), Labels: FleetLabels(ns)},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete},
				Rule:       admissionv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}}}}}},
			MatchConditions: []admissionv1.MatchCondition{{Name: "fleet-service-account", Expression: "request.userInfo.username.startsWith(" + celString(prefix) + ")"}},
			Variables: []admissionv1.Variable{
				{Name: "sa", Expression: "request.userInfo.username.substring(" + strconv.Itoa(len(prefix)) + ")"},
				{Name: "job", Expression: "request.operation == 'DELETE' ? oldObject : object"},
				{Name: "actor", Expression: "has(variables.job.metadata.labels) && " + celString(LabelActor) + " in variables.job.metadata.labels ? variables.job.metadata.labels[" + celString(LabelActor) + "] : ''"},
				{Name: "pair", Expression: "variables.sa + '/' + variables.actor"},
				{Name: "any", Expression: "variables.sa + '/*'"},
			},
			Validations: []admissionv1.Validation{
				{Expression: "request.operation != 'CREATE' || (variables.pair in " + celList(pairs["agent:launch"]) + " || variables.any in " + celList(pairs["agent:launch"]) + ")", Message: "agent:launch does not let this ServiceAccount launch that actor (or the Job names no actor)"},
				{Expression: "request.operation != 'DELETE'", Message: "no fleet ServiceAccount deletes a session's Job: runner cancel ends it, and its ttlSecondsAfterFinished (keepFinished) removes it"},
				{Expression: "request.operation != 'UPDATE' || ((variables.pair in " + celList(pairs["agent:update"]) + " || variables.any in " + celList(pairs["agent:update"]) + ")" + " && " + updateShape() + ") || " +
					"((variables.pair in " + celList(pairs["agent:cancel"]) + " || variables.any in " + celList(pairs["agent:cancel"]) + ")" + " && " + cancelShape() + ")",
					Message: "agent:update does not let this ServiceAccount update that actor's sessions, or the update changes more than suspend; agent:cancel lets it only cancel them (runner cancel)"},
				{Expression: "request.operation != 'CREATE' || " + c.templateShape(), Message: "a launched Job must be the actor's template: its ServiceAccount, the fleet's image and session command, the installation only, no secret, no host namespace"},
			},
		}}
	binding := policyBinding(ns, AdmissionPolicyName(ns))
	return vap, binding
}

// launchAdmission is the ValidatingAdmissionPolicy, and its binding, of the launches of agent a: a
// Job of a that one of the fleet's ServiceAccounts creates must be the Job the runner builds from
// a's PodTemplate (launchShape). One policy per agent, matched by the Job's actor label, keeps
// each small: the shape of a launch is some 20 KB of CEL, and one policy of every agent's outgrew
// the 256 KiB annotation a client-side kubectl apply keeps of an object at a dozen agents (the
// policy was not installed while the rest of the fleet was), and what etcd takes in one request
// at some 75. The fleet's policy (admission) still requires every launched Job to name an agent.
func (c *compiler) launchAdmission(a *ir.Actor) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	ns, obj := c.box.Namespace, ObjectName(a.Name.Value)
	name, prefix := LaunchPolicyName(ns, obj), "system:serviceaccount:"+ns+":"
	fail := admissionv1.Fail
	labels := "object.metadata.labels"
	vap := &admissionv1.ValidatingAdmissionPolicy{TypeMeta: typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: FleetLabels(ns)},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
				Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule:       admissionv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}}}}}},
			MatchConditions: []admissionv1.MatchCondition{
				{Name: "fleet-service-account", Expression: "request.userInfo.username.startsWith(" + celString(prefix) + ")"},
				{Name: "actor", Expression: "has(" + labels + ") && " + celString(LabelActor) + " in " + labels + " && " + labels + "[" + celString(LabelActor) + "] == " + celString(obj)},
			},
			// launchShape reads the launcher (sa: its ServiceAccount's name) and the actor (the
			// Job's actor label) as the fleet's policy names them.
			Variables: []admissionv1.Variable{
				{Name: "sa", Expression: "request.userInfo.username.substring(" + strconv.Itoa(len(prefix)) + ")"},
				{Name: "actor", Expression: celString(obj)},
			},
			Validations: []admissionv1.Validation{{Expression: c.launchShape(a),
				Message: "a launched Job of " + a.Name.Value + " must be the Job the runner builds from its PodTemplate: every field as the template has it (labels, security context, probes, lifecycle, scheduling, Job limits), its env the template's plus params that are plain values under names it declares and not reserved, their values at most " + strconv.Itoa(MaxLaunchParams) + " bytes together and its ref " + strconv.Itoa(MaxLaunchRef)}},
		}}
	return vap, policyBinding(ns, name)
}

// templateShape is the CEL condition a launched Job's pod meets: what the actor's PodTemplate
// fixes, with the session's env free but never read from a secret.
func (c *compiler) templateShape() string {
	pod, ctr := "object.spec.template.spec", "object.spec.template.spec.containers[0]"
	agents := make([]string, len(c.agents))
	for i, a := range c.agents {
		agents[i] = ObjectName(a)
	}
	conds := []string{
		"variables.actor in " + celList(agents),
		pod + ".serviceAccountName == variables.actor",
		"has(object.spec.template.metadata.labels) && " + celString(LabelActor) + " in object.spec.template.metadata.labels && object.spec.template.metadata.labels[" + celString(LabelActor) + "] == variables.actor",
		"size(" + pod + ".containers) == 1",
		ctr + ".name == " + celString(ContainerName),
		ctr + ".image == " + celString(c.box.Image),
		"!has(" + ctr + ".command)",
		"has(" + ctr + ".args) && " + ctr + ".args == " + celList(SessionArgs),
		"!has(" + ctr + ".envFrom)",
		"!has(" + ctr + ".env) || " + ctr + ".env.all(e, !has(e.valueFrom) || has(e.valueFrom.fieldRef))",
		"!has(" + ctr + ".volumeMounts) || " + ctr + ".volumeMounts.all(m, has(m.readOnly) && m.readOnly)",
		"!has(" + ctr + ".securityContext) || !has(" + ctr + ".securityContext.privileged) || !" + ctr + ".securityContext.privileged",
		"!has(" + pod + ".initContainers)",
		"!has(" + pod + ".ephemeralContainers)",
		"!has(" + pod + ".hostNetwork) || !" + pod + ".hostNetwork",
		"!has(" + pod + ".hostPID) || !" + pod + ".hostPID",
		"!has(" + pod + ".hostIPC) || !" + pod + ".hostIPC",
		"!has(" + pod + ".volumes) || " + pod + ".volumes.all(v, v.name == " + celString(InstallVolume) + " && has(v.projected) && v.projected.sources.all(s, has(s.configMap) && s.configMap.name in " + celList([]string{ConfigMapInstall, ConfigMapFleet}) + "))",
	}
	return "(" + strings.Join(conds, ") && (") + ")"
}

// updateShape is the CEL condition an update of a Job changes nothing but spec.suspend (and what
// the server manages: resourceVersion, managedFields, generation, status).
func updateShape() string {
	return celAll(unchangedBut(true, "suspend"))
}

// cancelMark is the form of AnnotationCancelled's value cancelPatch writes, and the only one the
// admission policy admits: an RFC 3339 time in UTC, to the second.
const cancelMark = `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z$`

// cancelShape is the CEL condition an update of a Job is the runner's cancel (cancelPatch) of a
// Job that has not ended and is not ending (no Complete or Failed condition, nor the
// FailureTarget or SuccessCriteriaMet the Job controller sets first, while the pods terminate:
// an ended session is never rewritten as cancelled) and nothing else: AnnotationCancelled added with the time of the cancel
// (cancelMark), every other annotation kept, parallelism 0, activeDeadlineSeconds 1, not
// suspended, every other field unchanged.
func cancelShape() string {
	conds := unchangedBut(false, "suspend", "parallelism", "activeDeadlineSeconds")
	ann, old := "object.metadata.annotations", "oldObject.metadata.annotations"
	conds = append(conds,
		"!has(oldObject.status) || !has(oldObject.status.conditions) || !oldObject.status.conditions.exists(c, c.type in ['Complete', 'Failed', 'FailureTarget', 'SuccessCriteriaMet'] && c.status == 'True')",
		"has("+ann+") && "+celString(AnnotationCancelled)+" in "+ann,
		ann+"["+celString(AnnotationCancelled)+"].matches("+celString(cancelMark)+")",
		ann+".all(k, k == "+celString(AnnotationCancelled)+" || (has("+old+") && k in "+old+" && "+old+"[k] == "+ann+"[k]))",
		"!has("+old+") || "+old+".all(k, k != "+celString(AnnotationCancelled)+" && k in "+ann+")",
		"has(object.spec.parallelism) && object.spec.parallelism == 0",
		"has(object.spec.activeDeadlineSeconds) && object.spec.activeDeadlineSeconds == 1",
		"!has(object.spec.suspend) || !object.spec.suspend")
	return celAll(conds)
}

// unchangedBut are the CEL conditions an update of a Job keeps every field of its spec but
// except, and its labels, finalizers, owners and deletion grace (and its annotations when
// annotations is set).
func unchangedBut(annotations bool, except ...string) []string {
	var conds []string
	same := func(path string) {
		conds = append(conds, "has(object."+path+") == has(oldObject."+path+") && (!has(object."+path+") || object."+path+" == oldObject."+path+")")
	}
	typ := reflect.TypeOf(batchv1.JobSpec{})
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && !slices.Contains(except, name) {
			same("spec." + name)
		}
	}
	for _, f := range []string{"labels", "annotations", "finalizers", "ownerReferences", "deletionGracePeriodSeconds"} {
		if f != "annotations" || annotations {
			same("metadata." + f)
		}
	}
	return conds
}

// celAll is the CEL conjunction of conds.
func celAll(conds []string) string {
	return "(" + strings.Join(conds, ") && (") + ")"
}

// celString is s as a CEL string literal (strconv.Quote's escapes are CEL's).
func celString(s string) string { return strconv.Quote(s) }

// celList is a CEL list of string literals.
func celList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = celString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
