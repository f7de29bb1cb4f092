#!/usr/bin/env bun
// ask-approval: a script agent, no model. Records the ask it was launched with; the runner engages the
// person. It reads only its env, as every behavior does, and writes its result where AUTONOMY_RESULT says.
import { writeFileSync } from "node:fs";

const ref = process.env.TARGET_REF ?? "";
const text = process.env.ASK_TEXT ?? "";
console.log(`asking approver about ${ref || "(no subject)"}: ${text}`);
writeFileSync(process.env.AUTONOMY_RESULT!, JSON.stringify({ status: "done", summary: `asked approver about ${ref || "(no subject)"}` }));
