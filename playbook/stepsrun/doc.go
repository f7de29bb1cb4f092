// Package stepsrun runs step playbooks (seed 002) with an agent: each ## STEP N (and each
// ### STEP Na sub-step of a branch taken) is one agent invocation. Its prompt is the ## SYSTEM
// prompt, the outputs of the steps before it (context accumulation), and its own body with
// {{name}} inputs and captured outputs substituted.
//
// @output(var[: type][, extract:"field"]) captures the invocation's final message (or a field of
// the JSON object it is), checked against its type: a value that does not fit fails the step,
// naming it. ```if var == "x"``` branches read inputs and earlier outputs. @elicit(input|confirm|
// select, "prompt", …) parks the run for a person: its state is saved in the store of paused runs
// under the SHA-256 of a random resume token (the workflow runtime's model, engine.NewToken and
// playproto.HashToken), and the answer resumes it, once. ## INPUTS are bound before anything runs
// (defaults, enum and number checks, a missing required input refused). ## ARTIFACTS is the last
// step's output, written to the artifacts directory with its declared type checked.
//
// Every step is checkpointed in the store before it starts and after it ends; a run killed mid-way
// continues, when it is run again, at its next unfinished step, and a completed step never runs
// again. A run of a session keeps its checkpoint when it parks and when it ends, until its runner
// drops it with the session, so that a runner that died before recording how the run ended
// continues it rather than start it over (NextStep says where).
package stepsrun
