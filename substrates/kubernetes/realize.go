package kubernetes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/autonomyhq/autonomy/substrates"
)

// Documents reads a multi-document YAML manifest into its objects, in order.
func Documents(data []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		js, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
}

// Objects reads every object the kustomization of out installs, in the order it lists them.
func Objects(out substrates.Output) ([]*unstructured.Unstructured, error) {
	data, err := out.File(Kustomization)
	if err != nil {
		return nil, err
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %v", Kustomization, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range k.Resources {
		data, err := out.File(Dir + "/" + r)
		if err != nil {
			return nil, err
		}
		docs, err := Documents(data)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %v", Dir, r, err)
		}
		objs = append(objs, docs...)
	}
	return objs, nil
}

// object finds the object of kind and name in objs and decodes it into into.
func object(objs []*unstructured.Unstructured, kind, name string, into any) error {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			js, err := o.MarshalJSON()
			if err != nil {
				return err
			}
			return json.Unmarshal(js, into)
		}
	}
	return fmt.Errorf("no %s %s is installed", kind, name)
}

// ReadFleetConfig reads the fleet config from the objects of an installation.
func ReadFleetConfig(objs []*unstructured.Unstructured) (FleetConfig, error) {
	var cm corev1.ConfigMap
	var fc FleetConfig
	if err := object(objs, "ConfigMap", ConfigMapFleet, &cm); err != nil {
		return fc, err
	}
	err := json.Unmarshal([]byte(cm.Data[FleetConfigKey]), &fc)
	return fc, err
}

// Realized checks that out, the compile of feature's probe profile, realizes the feature, reading
// the installed objects the way the cluster and the runner do (substrates.Realizer).
func (Substrate) Realized(feature string, out substrates.Output) error {
	objs, err := Objects(out)
	if err != nil {
		return err
	}
	fc, err := ReadFleetConfig(objs)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(fc.Actors, func(a ActorConfig) bool { return a.Actor == "probe" })
	if i < 0 {
		return fmt.Errorf("the fleet config has no actor probe")
	}
	probe := fc.Actors[i]
	var pt corev1.PodTemplate
	if probe.Kind == "agent" {
		if err := object(objs, "PodTemplate", ObjectName("probe"), &pt); err != nil {
			return err
		}
	}
	check := func(ok bool, format string, args ...any) error {
		if ok {
			return nil
		}
		return fmt.Errorf(format, args...)
	}
	name, arg, _ := strings.Cut(feature, ":")
	switch {
	case name == "capability" && strings.HasPrefix(arg, "agent:"):
		return roleRealized(objs, arg)
	case name == "capability" && arg == "@scope":
		var role rbacv1.Role
		if err := object(objs, "Role", ObjectName("probe"), &role); err != nil {
			return err
		}
		return check(slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.Resources, "podtemplates") && slices.Equal(r.ResourceNames, []string{ObjectName("other")})
		}), "the launcher may read other PodTemplates than other's")
	case name == "capability":
		return check(envOf(pt, "AUTONOMY_CAPABILITIES") == arg, "the session's env does not carry %s", arg)
	case feature == "trigger:cron":
		var cj batchv1.CronJob
		if err := object(objs, "CronJob", cronJobName("probe", 0), &cj); err != nil {
			return err
		}
		return check(cj.Spec.Schedule == "17 6 * * 1-5" && cj.Spec.TimeZone != nil && *cj.Spec.TimeZone == fc.TimeZone, "the CronJob does not hold the cron as written in the fleet's time zone")
	case feature == "trigger:dispatch", name == "source":
		src := arg
		if feature == "trigger:dispatch" {
			src = "subject.ref"
		}
		return check(slices.ContainsFunc(probe.Triggers, func(t Trigger) bool {
			return t.Kind == "dispatch" && slices.ContainsFunc(t.Params, func(p Param) bool { return p.Source == src })
		}), "the fleet config has no dispatch trigger forwarding %s", src)
	case feature == "kind:human":
		return check(probe.Kind == "human" && pt.Name == "", "the probe is not a person without a pod")
	case feature == "field:timeout":
		return check(JobTemplate(&pt).Spec.ActiveDeadlineSeconds != nil && *JobTemplate(&pt).Spec.ActiveDeadlineSeconds == 420, "the Job's deadline is not 7 minutes")
	case feature == "field:result":
		var cm corev1.ConfigMap
		if err := object(objs, "ConfigMap", ConfigMapInstall, &cm); err != nil {
			return err
		}
		_, ok := cm.Data[InstallKey(probe.Result)]
		return check(probe.Result != "" && ok && envOf(pt, "AUTONOMY_RESULT_SCHEMA") == InstallDir+"/"+probe.Result, "the result schema is not installed and named")
	case feature == "field:execution":
		return check(probe.Workspace == "isolated", "the workspace is %q", probe.Workspace)
	case feature == "policy:maxConcurrent":
		return check(fc.MaxConcurrent == 3, "the fleet config caps at %d, not 3", fc.MaxConcurrent)
	}
	return fmt.Errorf("no realization check for %s on %s", feature, Name)
}

// roleRealized checks the probe's Role grants what the permission table gives cap.
func roleRealized(objs []*unstructured.Unstructured, capability string) error {
	var role rbacv1.Role
	if err := object(objs, "Role", ObjectName("probe"), &role); err != nil {
		return err
	}
	for _, g := range permissions[capability] {
		if g.capped || g.asks {
			continue // granted only in a fleet with a maxConcurrent, or one with a person, which the probe profile declares not
		}
		if !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.Resources, g.resource) && !slices.ContainsFunc(g.verbs, func(v string) bool { return !slices.Contains(r.Verbs, v) })
		}) {
			return fmt.Errorf("the Role does not grant %v on %s", g.verbs, g.resource)
		}
	}
	return nil
}

// envOf is the value of the session container's env entry name in pt.
func envOf(pt corev1.PodTemplate, name string) string {
	for _, c := range pt.Template.Spec.Containers {
		for _, e := range c.Env {
			if c.Name == ContainerName && e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}
