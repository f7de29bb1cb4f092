// Package wire holds the names the gh-actions compiler writes into an installation and the
// runtime that reads it (package ghrun) agree on: the substrate's name, the manifest's path, the
// workflow_dispatch input a launch correlates its run by, and the job environment that names the
// calling actor and the runner's substrate. It imports nothing, so that both sides depend on it
// and neither on the other.
package wire

// Name is the gh-actions substrate's name, as a profile's targets and a manifest's target spell it.
const Name = "gh-actions"

// ManifestPath is the derived description of an installation, relative to its root: one per
// target, so that both targets can be compiled into one directory.
const ManifestPath = ".autonomy/gh-actions/manifest.json"

// CorrelationInput is the workflow_dispatch input a launcher sets to find the run it started:
// run-name echoes it. AUTONOMY_ is a reserved param prefix, so no param can take this name.
const CorrelationInput = "AUTONOMY_CORRELATION"

// ActorEnv names the calling actor in a compiled job.
const ActorEnv = "AUTONOMY_ACTOR"

// SubstrateEnv names the runner's default substrate: the agent job of an actor that calls the
// runner sets it to gh-actions.
const SubstrateEnv = "AUTONOMY_SUBSTRATE"
