// Package kubecmd is the kubernetes substrate as the registry lists it: kubernetes.Substrate with
// the command only it has, which it contributes to autonomy's command line: kubernetes prune
// (the objects an apply leaves behind). It is a package of its own so that package
// kubernetes, which every session's pod runs, stays free of the command-line library.
package kubecmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/kubernetes"
)

// Substrate is kubernetes.Substrate, and its command.
type Substrate struct{ kubernetes.Substrate }

// Commands are the commands only the kubernetes substrate has.
func (Substrate) Commands(substrates.Host) []*cobra.Command {
	group := &cobra.Command{
		Use:     "kubernetes",
		Short:   "Tend a kubernetes installation in its cluster: prune what an apply leaves behind",
		Example: `  autonomy kubernetes prune --dir .`,
	}
	group.AddCommand(newPrune())
	return []*cobra.Command{group}
}

func newPrune() *cobra.Command {
	var dir, kubeconfig string
	cmd := &cobra.Command{
		Use:   "prune [--dir DIR] [--kubeconfig FILE]",
		Short: "Delete the fleet's objects its compile no longer writes",
		Long: `prune deletes the objects of the fleet that autonomy compile PROFILE --target
kubernetes --dir DIR wrote into DIR/kubernetes, and that the compile no longer writes:
kubectl apply -k installs what the kustomization lists and deletes nothing, so the objects of an
agent the profile dropped (its ServiceAccount, Role, RoleBinding, PodTemplate, CronJobs and
launch policy), the model proxy of a fleet left with no skill, the slots of one left with no
maxConcurrent, and the policies of the names before autonomy-NAMESPACE.…
(autonomy-NAMESPACE-sessions, …) would stay. Run it after the apply:

  kubectl apply --server-side -k DIR/kubernetes
  autonomy kubernetes prune --dir DIR

A fleet's object is one labelled autonomy.dev/fleet=NAMESPACE and
app.kubernetes.io/managed-by=autonomy, the fleet's namespace (policy.box.kubernetes.namespace),
and, when namespaced, in that namespace: another namespace's fleet, an object not so labelled,
a session's Job and pod, and an ask are never touched. A session of a dropped agent in flight
runs on to its end (a CronJob's Jobs are orphaned, not deleted), and its Job stays until
keepFinished; from the prune on, its calls to the API fail (its ServiceAccount is gone). Each
delete carries the object's uid. It deletes nothing, and says to compile again or to apply,
unless DIR/kubernetes is a whole compile as compile wrote it (its objects hash to the
autonomy.dev/compile annotation of its Namespace, and the fleet-wide objects every compile writes
are among them), every object it lists is in the cluster, and the cluster's Namespace carries
that same hash: a folder older than the applied compile, or truncated, or edited, deletes
nothing. It reads only the files the kustomization lists, each once, never through a link, never
a FIFO or a device, at most 8 MiB each and 32 MiB in all. It prints each object it deleted.
The cluster is --kubeconfig's (else $KUBECONFIG, else ~/.kube/config); deleting cluster-scoped
policies takes a cluster administrator's rights, as installing them does.

Exit codes: 0 done, 2 usage, I/O, connection or API error.`,
		Example: `  autonomy kubernetes prune --dir .`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			objs, err := kubernetes.ReadInstallation(dir)
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			cs, _, err := kubernetes.Connect{Kubeconfig: kubeconfig}.Client()
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			pruned, err := kubernetes.Prune(cmd.Context(), cs, objs)
			out := cmd.OutOrStdout()
			for _, p := range pruned {
				name := p.Name
				if p.Namespace != "" {
					name = p.Namespace + "/" + name
				}
				fmt.Fprintf(out, "deleted %s %s\n", p.Kind, cliout.TerminalSafe(name))
			}
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			if len(pruned) == 0 {
				fmt.Fprintln(out, "nothing to prune")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "the directory autonomy compile --target kubernetes wrote into (it holds kubernetes/)")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig of the cluster (default $KUBECONFIG, else ~/.kube/config)")
	return cmd
}
