package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/internal/jsonschema"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/strictjson"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// defaultResultPath is where the default contract (autonomy.result.v1) is installed.
const defaultResultPath = resultsDir + "/" + ir.DefaultContract + ".json"

// submitted is the result a session delivered through the submit_result tool ("" when it made
// no such call): the input the runner recorded with it (hands.go), JSON.
func (r *Runner) submitted(ctx context.Context, session string) (string, error) {
	events, err := r.Store.Events(ctx, session, 0)
	if err != nil {
		return "", err
	}
	out := ""
	for _, e := range events {
		if e.Kind == toolEvent(tools.SubmitResult) {
			out = e.Message
		}
	}
	return out, nil
}

// verify decides what an exit 0 means. An actor without a result contract (one that opts out
// with result: { schema: none }, skill or script) is done. Any other is done only with a result
// that validates against its contract and does not say failed: the one it delivered through
// submit_result (the tool's input for the default contract, its output member for a declared
// one), else its result file (AUTONOMY_RESULT: a script writes its result there). Done is
// verified, never presumed.
func (in *Install) verify(cfg *ActorConfig, resultPath, submitted string) (ir.SessionStatus, string, string) {
	if cfg.Result == "" {
		return ir.Done, "", "exit status 0 only: the actor opts out of a result (result: { schema: none }), which is weaker than a validated result"
	}
	data, source, why := in.resultDoc(cfg, resultPath, submitted)
	if why != "" {
		return ir.Failed, why, ""
	}
	doc, err := strictjson.Decode(data)
	var ke *strictjson.KeyError
	if errors.As(err, &ke) {
		return ir.Failed, fmt.Sprintf("exit status 0 but the result is refused: %s:%v", source, err), ""
	}
	var ne *jsonschema.NumberError
	if errors.As(err, &ne) {
		return ir.Failed, fmt.Sprintf("exit status 0 but the result cannot be checked: %v (the result delivered by %s)", err, source), ""
	}
	if err != nil {
		return ir.Failed, fmt.Sprintf("exit status 0 but the result is not JSON: %v (the result delivered by %s; a session delivers one JSON object, through submit_result)", err, source), ""
	}
	if why := in.validateResult(cfg, doc); why != "" {
		return ir.Failed, fmt.Sprintf("exit status 0 but the result does not satisfy %s: %s (the result in %s)", contractName(cfg), why, source), ""
	}
	st, ok := reported(doc, submitted, cfg.Result == defaultResultPath)
	if ok && st.Status == "failed" {
		return ir.Failed, "the agent reported its work failed: " + clip(st.Summary), ""
	}
	if source != filepath.Base(resultPath) {
		// Delivered through submit_result: its readers (a reviewer's verdict, a capsule's digest)
		// read the result path, which then holds what was validated, not what the session left there.
		if err := recordResult(resultPath, data); err != nil {
			return ir.Failed, "exit status 0 but its result cannot be recorded: " + err.Error(), ""
		}
	}
	verified := fmt.Sprintf("exit status 0 and the result (delivered by %s) validates against %s", source, contractName(cfg))
	if ok && strings.TrimSpace(st.Summary) != "" {
		verified += "; its summary: " + clip(st.Summary) // what runner get shows of what was done
	}
	return ir.Done, "", verified
}

// recordResult makes data the session's result file at path, replacing whatever is there.
func recordResult(path string, data []byte) error {
	if err := removeStale(path); err != nil {
		return err
	}
	return writeNew(path, data, 0o600)
}

// resultDoc is the result a session delivered and where it came from, or why there is none.
func (in *Install) resultDoc(cfg *ActorConfig, resultPath, submitted string) (data []byte, source, why string) {
	if submitted != "" {
		if cfg.Result == defaultResultPath {
			return []byte(submitted), "submit_result", ""
		}
		var call struct {
			Output json.RawMessage `json:"output"`
		}
		if strictjson.Unmarshal([]byte(submitted), &call) == nil && len(call.Output) > 0 {
			return call.Output, "submit_result's output", ""
		}
	}
	data, err := readResultFile(resultPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Sprintf("exit status 0 but its result cannot be read: %v (write one JSON object, a plain file of at most 1 MiB, where AUTONOMY_RESULT says, or call submit_result)", err)
	}
	if err != nil {
		return nil, "", fmt.Sprintf("exit status 0 but no result: the session did not call submit_result, and %s was not written "+
			"(a session is done only with a result that satisfies %s: call submit_result, or write it, one JSON object, to the file AUTONOMY_RESULT names; a script does so before it exits 0)", resultPath, contractName(cfg))
	}
	return data, filepath.Base(resultPath), ""
}

// reported is the status and summary the agent reported: those of its submit_result call, else
// those of a result file of the default contract (isDefault).
func reported(doc any, submitted string, isDefault bool) (tools.Result, bool) {
	var st tools.Result
	if submitted != "" {
		if status, summary, err := tools.ReportedStatus([]byte(submitted)); err == nil && status != "" {
			st.Status, st.Summary = status, summary
			return st, true
		}
	}
	m, ok := doc.(map[string]any)
	if !ok || !isDefault {
		return st, false
	}
	st.Status, _ = m["status"].(string)
	st.Summary, _ = m["summary"].(string)
	return st, st.Status != ""
}

// validateResult checks a result document against the actor's installed contract, and says
// which fields fail ("" when it validates).
func (in *Install) validateResult(cfg *ActorConfig, doc any) string {
	raw, err := os.ReadFile(in.Path(cfg.Result))
	if err != nil {
		return fmt.Sprintf("cannot read the result schema %s: %v", cfg.Result, err)
	}
	schemaDoc, err := jsonschema.Decode(raw)
	if err != nil {
		return fmt.Sprintf("the result schema %s is not JSON: %v (compile again)", cfg.Result, err)
	}
	if m, ok := schemaDoc.(map[string]any); ok {
		delete(m, "//") // the DO NOT EDIT header member
	}
	sch, err := jsonschema.Compile(schemaDoc)
	if err != nil {
		return fmt.Sprintf("the result schema %s does not compile: %v", cfg.Result, err)
	}
	if err := sch.Validate(doc); err != nil {
		return ir.ExplainResultError(err)
	}
	return ""
}

// contractName names the actor's contract: its installed file, or the default's name.
func contractName(cfg *ActorConfig) string {
	if cfg.Result == defaultResultPath {
		return ir.DefaultContract
	}
	return cfg.Result
}

// withContract tells a skill session of the default contract how to deliver its result: the
// skill (woven or not) followed by tools.ResultInstructions, written under the state folder; its
// path is the agent's stdin. Any other session's stdin is returned unchanged.
func (in *Install) withContract(s store.Session, cfg *ActorConfig, skill string) (string, error) {
	if cfg.Result != defaultResultPath {
		return skill, nil
	}
	text, err := os.ReadFile(skill)
	if err != nil {
		return "", fmt.Errorf("cannot read its behavior: %v", err)
	}
	out := in.Path(StateDir + "/prompts/" + s.ID + ".md")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	if err := writeNew(out, append(text, tools.ResultInstructions()...), 0o644); err != nil {
		return "", err
	}
	return out, nil
}

// structured reports whether the actor's preset is asked for a structured result: a declared
// contract is (--output-schema, --json-schema); the default contract is delivered through
// submit_result, or as the final message.
func structured(cfg *ActorConfig) bool { return cfg.Result != "" && cfg.Result != defaultResultPath }
