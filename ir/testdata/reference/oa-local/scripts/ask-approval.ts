#!/usr/bin/env bun
// ask-approval: a script agent, no model. Records the ask it was launched with; the runner engages the
// person. It reads only its env, as every behavior does.
const ref = process.env.TARGET_REF ?? "";
const text = process.env.ASK_TEXT ?? "";
console.log(`asking approver about ${ref || "(no subject)"}: ${text}`);
