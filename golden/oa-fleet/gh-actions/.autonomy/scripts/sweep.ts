// sweep: a deterministic pass, no model. Reports the policy knobs it runs under.
import { readFileSync, writeFileSync } from "node:fs";

const policy = JSON.parse(readFileSync(process.env.AUTONOMY_POLICY ?? ".autonomy/policy.json", "utf8"));
const cap: number = policy.box?.autonomy?.max_open_agent_prs ?? 1;
console.log(`sweep: at most ${cap} agent pull requests in flight`);
// Its result (autonomy.result.v1): a session is done only with one that validates.
writeFileSync(process.env.AUTONOMY_RESULT!, JSON.stringify({ status: "done", summary: `swept: at most ${cap} agent pull requests in flight` }));
