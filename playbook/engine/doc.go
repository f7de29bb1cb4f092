// Package engine runs workflow playbooks (seed 003): the run/resume contract and its envelope.
//
// A run validates the workflow (the format's rules, then what this runtime supports: cli, http
// and mcp steps, an mcp step only naming a declared server; web and node are refused), then executes its steps in order. A cli step is
// split into words by shell rules and exec'd directly, never through a shell; references
// ($id.stdout, $id.json, $args.NAME, $secrets.NAME) are substituted inside each word, so a value
// never becomes more words. Every step runs under a timeout that kills its whole process group,
// an output cap, and a working directory confined to the workspace. A step with approval:
// required pauses the run: its state is saved under the SHA-256 of a random resume token (the
// token is returned once and never stored), and Resume redeems the token exactly once, running
// the approved step and what follows without repeating a completed step, or cancelling the run
// with no further side effect.
package engine
