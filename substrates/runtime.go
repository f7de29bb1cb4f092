package substrates

import (
	"context"
	"io"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// Host is what autonomy's command line lends the commands a substrate contributes to it (a
// substrate's Commands, found by the command line on the registry's substrates).
type Host struct {
	// LoadForTarget loads and validates the profile at path as compile does for target, printing
	// its diagnostics on errOut: a profile with errors is an exit-1 error saying nothing was done
	// (done: "provisioned", ...).
	LoadForTarget func(path, target, done string, errOut io.Writer) (*resolved.Profile, Substrate, ir.Diagnostics, error)
	// Lookup finds a registered substrate by its name or an alias; Names lists the registered
	// substrates' names, in order.
	Lookup func(name string) (Substrate, bool)
	Names  func() []string
}

// TargetEnv names the substrate `autonomy runner` drives when --target is not given (the local
// runner when unset): a compiled job whose agent calls the runner sets it to its substrate.
const TargetEnv = "AUTONOMY_SUBSTRATE"

// RunnerVerbs is implemented by a substrate whose runner autonomy's runner verbs drive from where
// it runs (gh-actions: inside a job of the installation), for `autonomy runner --target NAME`.
type RunnerVerbs interface {
	// RunVerb runs call.Verb (launch, get, list, cancel, ...) and prints its result. A verb the
	// runner does not have is a usage error saying which it has.
	RunVerb(ctx context.Context, call RunnerCall) error
}

// RunnerCall is a runner verb as the command line parsed it.
type RunnerCall struct {
	Verb string
	Args []string
	// Dir is --dir when given on the command line, else "" (the substrate's default).
	Dir string
	// Kubeconfig and Namespace are --kubeconfig and --namespace: where a cluster's runner is.
	Kubeconfig, Namespace string
	// Format is text or json.
	Format string
	// All is list's --all.
	All bool
	// Params are launch's --param and --params-json, merged.
	Params map[string]string
	// Ref, Text, From, Kind and Branch are launch's flags for the trigger's sources.
	Ref, Text, From, Kind, Branch string
	// Follow is logs' -f; Status, Token, Evidence and NewToken are update's flags.
	Follow                  bool
	Status, Token, Evidence string
	NewToken                bool
	Out, Err                io.Writer
}
