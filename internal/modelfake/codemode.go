package modelfake

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// codeModeTool is the one tool codex offers a model in its code mode (the default of its newer
// models, gpt-6.1-sol for codex 0.169.0): a custom tool whose input is JavaScript, run in an
// isolate whose global `tools` holds the shell (exec_command, write_stdin) and the MCP tools.
// codex lists it in an additional_tools input item, not in the request's tools.
const codeModeTool = "exec"

// codeModeYieldMS is how long exec may run before it yields to the model (its pragma): longer
// than any scripted command polls for, so one call plays one turn.
const codeModeYieldMS = 600000

// additionalTools is the names of the tools an additional_tools input item offers (a list of
// namespaces of tools, or tools).
func additionalTools(items []responsesItem) []string {
	var names []string
	for _, it := range items {
		if it.Type != "additional_tools" {
			continue
		}
		for _, t := range it.Tools {
			if t.Type != "namespace" {
				names = append(names, t.Name)
				continue
			}
			for _, f := range t.Tools {
				names = append(names, f.Name)
			}
		}
	}
	return names
}

// codeModeTurn plays the next turn where the CLI offers only code mode's exec: a shell turn is a
// script that runs the command with exec_command and polls it with write_stdin until it exits,
// a tool turn one that calls the tool (found by its name or its last part after "__"), each
// reporting what it got as its text; an answer is an answer.
func (s *Server) codeModeTurn(w http.ResponseWriter, req responsesRequest, rec *Request, h responsesHistory) func() {
	rec.Aux = false
	st, err := s.next(h.conv, "")
	if err != nil {
		s.fail(fmt.Errorf("modelfake: openai conversation %s: %v", rec.Conversation, err))
		return func() { openAIError(w, http.StatusBadRequest, "modelfake: "+err.Error()) }
	}
	rec.Turn = st.turn
	var js string
	switch {
	case st.t.Tool != "":
		js = codeModeToolScript(st.t.Tool, toolArgs(st.t.Args))
	case st.t.Shell != "":
		js = codeModeShellScript(st.t.Shell)
	case st.t.JSON != nil:
		return func() { writeResponse(w, req, rec.Model, nil, string(st.t.JSON)) }
	default:
		return func() { writeResponse(w, req, rec.Model, nil, st.t.Text) }
	}
	call := map[string]any{"type": "custom_tool_call", "name": codeModeTool, "input": js,
		"call_id": fmt.Sprintf("call_modelfake_%d", st.turn)}
	return func() { writeResponse(w, req, rec.Model, call, "") }
}

// codeModeShellScript runs cmd to its end and reports its exit code and output as codex's
// shell tool does, so a script's next turn reads the same text in either mode.
func codeModeShellScript(cmd string) string {
	q, _ := json.Marshal(cmd)
	return fmt.Sprintf(`// @exec: {"yield_time_ms": %d}
let r = await tools.exec_command({cmd: %s, yield_time_ms: %d});
let out = r.output || "";
while (r.exit_code === undefined && r.session_id !== undefined) {
  r = await tools.write_stdin({session_id: r.session_id, chars: "", yield_time_ms: %d});
  out += r.output || "";
}
text("Process exited with code " + r.exit_code + "\nOutput:\n" + out);
`, codeModeYieldMS, q, execYieldMS, pollYieldMS)
}

// codeModeToolScript calls the tool named name (or whose name ends in "__"+name: an MCP tool's
// normalized name) with args, a JSON object, and reports its result as JSON.
func codeModeToolScript(name, args string) string {
	q, _ := json.Marshal(name)
	return fmt.Sprintf(`// @exec: {"yield_time_ms": %d}
const want = %s;
const found = ALL_TOOLS.map((t) => t.name).find((n) => n === want || n.endsWith("__" + want));
if (found === undefined) {
  text("modelfake: no tool " + want + " among " + ALL_TOOLS.map((t) => t.name).join(", "));
} else {
  const r = await tools[found](%s);
  text(typeof r === "string" ? r : JSON.stringify(r));
}
`, codeModeYieldMS, q, args)
}
