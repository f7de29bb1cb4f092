package kubernetes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/kubeclient"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/testbin"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/kubernetes"
)

// TestProbeChecksCatchDefects: the behavioral checks the Kubernetes runner's subject observes fail
// on a realization broken where they look, in the cluster: a CronJob that fires at another minute
// or in another time zone, or does not tell its session trigger.kind, fails cron-fires; a fleet
// config binding a param to another source than the profile's fails param-sources, and with the
// Job admission policy unbound, session-sources; a result
// contract installed as one that accepts anything fails result-validated; a Job without its
// actor's deadline fails timeout; an isolated behavior that works in the installation every
// session shares fails isolation.
func TestProbeChecksCatchDefects(t *testing.T) {
	cs, kubeconfig := kubernetes.ClusterClient(t) // skips without a cluster
	rc := kubernetes.RunnerClient(t)
	targets, err := kubernetes.ProbeTargets(conformance.ProbeEnv(kubernetes.Substrate{}, "", testbin.Path(t)))
	if err != nil || targets[0].Skip != "" {
		t.Fatalf("targets: %+v, %v", targets, err)
	}
	cases := []struct {
		defect, check string
		do            func(ctx context.Context, ns string, s *substrates.ProbeSubject) error
	}{
		{"the CronJob fires at another minute", "cron-fires", func(ctx context.Context, ns string, _ *substrates.ProbeSubject) error {
			return editCronJob(ctx, cs, ns, func(cj *batchv1.CronJob) { cj.Spec.Schedule = "18 6 * * *" })
		}},
		{"the CronJob fires in another time zone", "cron-fires", func(ctx context.Context, ns string, _ *substrates.ProbeSubject) error {
			return editCronJob(ctx, cs, ns, func(cj *batchv1.CronJob) { tz := "Europe/Paris"; cj.Spec.TimeZone = &tz })
		}},
		{"the CronJob's session is not told trigger.kind", "cron-fires", func(ctx context.Context, ns string, _ *substrates.ProbeSubject) error {
			return editCronJob(ctx, cs, ns, func(cj *batchv1.CronJob) {
				env := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env
				for i := range env {
					if env[i].Name == "PROBE_KIND" {
						env[i].Value = ""
					}
				}
			})
		}},
		{"subject.text reaches a param bound to it as the ref", "param-sources", func(ctx context.Context, ns string, s *substrates.ProbeSubject) error {
			return rebind(ctx, cs, rc, ns, s, "PROBE_TEXT", "subject.ref")
		}},
		{"subject.actor is not who dispatched", "param-sources", func(ctx context.Context, ns string, s *substrates.ProbeSubject) error {
			return rebind(ctx, cs, rc, ns, s, "PROBE_ACTOR", "subject.text")
		}},
		{"a session may set its role", "session-sources", func(ctx context.Context, ns string, s *substrates.ProbeSubject) error {
			if err := rebind(ctx, cs, rc, ns, s, "PROBE_ROLE", "subject.text"); err != nil {
				return err
			}
			return kubernetes.DropSessionAdmission(ctx, kubeconfig, ns)
		}},
		{"the Job has no activeDeadlineSeconds", "timeout", func(ctx context.Context, ns string, _ *substrates.ProbeSubject) error {
			pt, err := cs.CoreV1().PodTemplates(ns).Get(ctx, kubernetes.ObjectName("overtime"), metav1.GetOptions{})
			if err != nil {
				return err
			}
			delete(pt.Annotations, kubernetes.AnnotationTimeout)
			_, err = cs.CoreV1().PodTemplates(ns).Update(ctx, pt, metav1.UpdateOptions{})
			return err
		}},
		{"the isolated actor runs in the shared installation", "isolation", func(ctx context.Context, ns string, _ *substrates.ProbeSubject) error {
			install, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, kubernetes.ConfigMapInstall, metav1.GetOptions{})
			if err != nil {
				return err
			}
			edited := 0
			for key, script := range install.Data {
				if strings.HasSuffix(key, "-where.sh") && strings.Contains(script, "set -eu\n") {
					install.Data[key] = strings.Replace(script, "set -eu\n", "set -eu\ncd \"$AUTONOMY_DIR\"\n", 1)
					edited++
				}
			}
			if edited != 1 {
				return fmt.Errorf("%d where.sh in the installation, want 1", edited)
			}
			_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, install, metav1.UpdateOptions{})
			return err
		}},
		{"the result contract installed accepts anything", "result-validated", func(ctx context.Context, ns string, s *substrates.ProbeSubject) error {
			if err := acceptAnyResult(ctx, cs, ns, "resulter"); err != nil {
				return err
			}
			r, err := kubernetes.OpenRunner(ctx, rc, ns, "")
			s.Runner = r
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.defect, func(t *testing.T) {
			broken := targets[0]
			broken.New = func(ctx context.Context) (*substrates.ProbeSubject, error) {
				s, err := targets[0].New(ctx)
				if err != nil {
					return nil, err
				}
				if err := c.do(ctx, kubernetes.SubjectNamespace(s), s); err != nil {
					s.Close()
					return nil, err
				}
				return s, nil
			}
			rs := conformance.RunChecks(context.Background(), []conformance.Target{broken}, c.check)
			if len(rs) != 1 || rs[0].Outcome != conformance.Fail || strings.HasPrefix(rs[0].Reason, "setting up") {
				t.Fatalf("%s: %+v, want the check's failure (not its subject's)", c.check, rs)
			}
			t.Logf("%s: %s", c.check, rs[0].Reason)
		})
	}
}

// editCronJob changes the fleet's one CronJob (the probe fleet's ticker's).
func editCronJob(ctx context.Context, cs k8s.Interface, ns string, edit func(*batchv1.CronJob)) error {
	list, err := cs.BatchV1().CronJobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		edit(&list.Items[i])
		if _, err := cs.BatchV1().CronJobs(ns).Update(ctx, &list.Items[i], metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// acceptAnyResult replaces actor's installed result contract by one any object satisfies.
func acceptAnyResult(ctx context.Context, cs k8s.Interface, ns, actor string) error {
	fleet, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, kubernetes.ConfigMapFleet, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var fc kubernetes.FleetConfig
	if err := json.Unmarshal([]byte(fleet.Data[kubernetes.FleetConfigKey]), &fc); err != nil {
		return err
	}
	install, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, kubernetes.ConfigMapInstall, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, a := range fc.Actors {
		if a.Actor == actor {
			install.Data[kubernetes.InstallKey(a.Result)] = `{"type":"object"}`
		}
	}
	_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, install, metav1.UpdateOptions{})
	return err
}

// rebind binds the probe actor's param name to source in the installed fleet config, and reopens
// the subject's runner on it.
func rebind(ctx context.Context, cs k8s.Interface, rc *kubeclient.Client, ns string, s *substrates.ProbeSubject, name, source string) error {
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, kubernetes.ConfigMapFleet, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var fc map[string]any
	if err := json.Unmarshal([]byte(cm.Data[kubernetes.FleetConfigKey]), &fc); err != nil {
		return err
	}
	for _, a := range fc["actors"].([]any) {
		if a := a.(map[string]any); a["actor"] == "probe" {
			for _, tr := range a["triggers"].([]any) {
				for _, p := range tr.(map[string]any)["params"].([]any) {
					if p := p.(map[string]any); p["name"] == name {
						p["source"] = source
					}
				}
			}
		}
	}
	js, err := json.Marshal(fc)
	if err != nil {
		return err
	}
	cm.Data[kubernetes.FleetConfigKey] = string(js)
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return err
	}
	r, err := kubernetes.OpenRunner(ctx, rc, ns, "")
	s.Runner = r
	return err
}
