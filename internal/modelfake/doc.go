// Package modelfake is a scripted model endpoint for tests, and for `autonomy dev model` (a
// trial of a fleet without a model account: Listen, ReadScript): an in-process
// HTTP server on 127.0.0.1 that speaks enough of the OpenAI Responses API
// (POST /v1/responses, streamed as codex reads it) and of the Anthropic
// Messages API (POST /v1/messages, streamed as Claude Code reads it) to play
// a script against a real agent CLI: receive the prompt, ask the CLI to run a
// shell command, receive the command's output, answer with a final message
// or a structured result. Every request is recorded so a test can assert
// that the skill text and the params reached the model and that the tool
// output came back.
//
//	fake := modelfake.Start(
//		modelfake.Turn{Shell: "git commit -qam proof"},
//		modelfake.Turn{Text: "Committed."},
//	)
//	defer fake.Close()
//	// run the CLI against fake.OpenAIBaseURL() or fake.AnthropicBaseURL()
//	if err := fake.Err(); err != nil { t.Fatal(err) }
//	first := fake.Scripted()[0] // first.Prompt holds the skill text
//
// The script is played per conversation and needs no server-side state: the
// number of shell calls already in a request's history is the index of the
// turn to play, so retries and concurrent conversations are safe. Requests
// without the shell tool (title generation, quota probes), token counts,
// model listings and connectivity probes (claude's HEAD /api/hello) are
// answered generically and do not consume the script. A script violation
// (exhausted, tool result missing, a body that is not JSON) is answered with
// HTTP 400 carrying the reason, which both CLIs print before exiting 1
// within two seconds, and is reported by Err.
//
// # codex 0.169.0 (proven by TestCodexRunsShellAndAnswers and friends)
//
// The shell tool it offers is the function exec_command {"cmd": "..."}; its
// result comes back as a function_call_output whose output reads
// "Process exited with code N\nOutput:\n...". The fake asks for a 30 s wait
// (codex's cap; its default is 10 s); a command still running then is
// polled with write_stdin until it exits, so the next turn never overtakes
// it (TestCodexWaitsForSlowCommand).
//
// Without -m, codex 0.169.0 asks for its default model, gpt-6.1-sol, and offers it code mode
// instead: no tool in the request's tools, one additional_tools input item (role developer)
// holding namespaces of tools, the functions namespace's custom tool exec taking JavaScript
// run in an isolate whose global tools holds exec_command, write_stdin and the session's MCP
// tools (mcp__SERVER__TOOL, listed in ALL_TOOLS). The fake then answers a shell turn with a
// custom_tool_call of exec whose script runs the command with tools.exec_command, polls it
// with tools.write_stdin until it has an exit_code, and reports "Process exited with code
// N\nOutput:\n..." with text(); a tool turn with a script calling the tool found in ALL_TOOLS
// by its name or its last part after "__" (TestCodexCodeModeRunsShellAndAnswers; through a
// local session's tools, TestCodexCodeModeActsThroughTheTools). The argv, prompt on stdin:
//
//	codex exec --json --skip-git-repo-check --ephemeral --ignore-user-config \
//	  --sandbox danger-full-access \
//	  -m gpt-5.5 \
//	  -c model_provider=modelfake \
//	  -c 'model_providers.modelfake.name="modelfake"' \
//	  -c 'model_providers.modelfake.base_url="http://127.0.0.1:PORT/v1"' \
//	  -c 'model_providers.modelfake.wire_api="responses"' \
//	  -c 'model_providers.modelfake.env_key="MODELFAKE_API_KEY"' \
//	  [--output-schema schema.json -o result.json] -
//
// with env CODEX_HOME=<empty dir> HOME=<dir> MODELFAKE_API_KEY=<key> (sent
// as Authorization: Bearer <key>; codex exits 1 when the env_key variable is
// unset). --full-auto no longer exists (exit 2). A model slug codex has no
// metadata for (gpt-5-codex) still works but adds an "error" item to the
// --json stream; gpt-5.5 is in its catalog. With --output-schema the schema
// is sent as text.format.schema and -o receives the final message text,
// i.e. the JSON. A CODEX_HOME under $TMPDIR (/tmp by default) prints a
// warning: codex then makes no PATH aliases for its helpers, codex-linux-sandbox
// among them, and every sandboxed command fails ("bwrap: execvp
// codex-linux-sandbox: No such file or directory"); the launchers give codex a
// TMPDIR of its own (agent.Preset.TempEnv).
//
// Sandbox, in this container (kernel 6.18, root, bwrap (the system's, else codex's) plus
// a seccomp filter; TestCodexWorkspaceWriteSandbox): --sandbox
// workspace-write lets commands write the workspace, /tmp and $TMPDIR, and
// nothing else; .git is read-only (git commit fails) unless the git
// directories are added: in a worktree both `git rev-parse
// --path-format=absolute --git-common-dir` and `--git-dir`, each with
// --add-dir. The network (loopback included) is closed unless
// -c sandbox_workspace_write.network_access=true. /tmp and $TMPDIR stop
// being writable with -c sandbox_workspace_write.exclude_slash_tmp=true
// -c sandbox_workspace_write.exclude_tmpdir_env_var=true. Each writable root
// gets a read-only .git mount point while codex runs, made when absent: with
// /tmp writable that is /tmp/.git, which puts every folder under /tmp inside
// a "git repository" meanwhile (the test excludes /tmp). Caveat: a
// writable git directory includes its hooks. danger-full-access (and
// --dangerously-bypass-approvals-and-sandbox) runs unsandboxed.
//
// Skills (TestSkillFolders): codex lists the skills of <workspace>/.codex/skills,
// <workspace>/.agents/skills and $CODEX_HOME/skills to the model by name and
// description; the body of SKILL.md is not sent. Against a closed port codex
// keeps reconnecting ("Reconnecting... waiting for network") for more than
// 20 s rather than exiting.
//
// MCP tools (TestCodexCallsTheTools, TestClaudeCallsTheTools in
// internal/mcpserver): a Tool turn calls a tool an MCP server gave the CLI.
// codex 0.169.0 defers MCP tools behind its client-side tool_search tool:
// the fake first answers with a tool_search_call {"query": TOOL}; codex
// replies with a tool_search_output holding a namespace ("mcp__<server>")
// of functions, and the fake then calls the function by name with that
// namespace. Claude Code 2.1.330 lists them as mcp__<server>__<tool> when
// ENABLE_TOOL_SEARCH=false; otherwise it may defer them behind its
// ToolSearch tool, depending on when the server connected.
//
// # Claude Code 2.1.330 (proven by TestClaudeRunsShellAndAnswers and friends)
//
// The shell tool is Bash {"command": "...", "description": "..."}; the
// result comes back as a tool_result block. The argv, prompt on stdin:
//
//	claude -p --output-format json --dangerously-skip-permissions \
//	  --no-session-persistence --model claude-sonnet-4-5 \
//	  [--json-schema '<schema JSON>']
//
// with env HOME=<dir> ANTHROPIC_BASE_URL=http://127.0.0.1:PORT
// ANTHROPIC_API_KEY=<key> (sent as x-api-key) and, when running as root,
// IS_SANDBOX=1: without it claude refuses --dangerously-skip-permissions
// ("cannot be used with root/sudo privileges", exit 1), and
// --permission-mode bypassPermissions is refused the same way. It calls
// HEAD /api/hello first (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 drops
// it), then POST /v1/messages?beta=true with stream: true. stdout is one
// JSON object: "result" is the final text, "is_error" tells failure. With
// --json-schema it offers a StructuredOutput tool whose input_schema is the
// schema; the model calls it with the result and the run ends there, with
// the object in "structured_output". Skills: it lists those of
// <workspace>/.claude/skills and $HOME/.claude/skills, by name and
// description only. Against a closed port it is still retrying after 20 s.
// The npm package declares node >=22
// but ships a native binary, so node 20 installs and runs it.
package modelfake
