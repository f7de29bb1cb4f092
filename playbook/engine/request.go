package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// MaxRequestBytes caps a JSON run request (1 MiB plus a little: an inline pipeline is a
// workflow, at most workflow.MaxSize).
const MaxRequestBytes = 1<<20 + 64<<10

// RunRequest is seed 003's run/resume request as JSON, what another runtime sends to drive this
// one (autonomy playbook run --request):
//
//	{"action": "run", "pipeline": "<inline pipeline or playbook file path>", "argsJson": "{\"k\":\"v\"}",
//	 "cwd": "<workspace-relative cwd>", "timeoutMs": 30000, "maxOutputBytes": 512000}
//	{"action": "resume", "token": "<resumeToken>", "approve": true}
//
// argsJson is a string holding a JSON object, as the seed writes it (an object is taken too).
type RunRequest struct {
	Action         string          `json:"action"`
	Pipeline       string          `json:"pipeline"`
	ArgsJSON       json.RawMessage `json:"argsJson"`
	Cwd            string          `json:"cwd"`
	TimeoutMs      *int            `json:"timeoutMs"`
	MaxOutputBytes *int            `json:"maxOutputBytes"`
	Token          string          `json:"token"`
	Approve        *bool           `json:"approve"`
}

// requestFields are the members of a request, per action, for messages.
var requestFields = map[string][]string{
	"run":    {"action", "pipeline", "argsJson", "cwd", "timeoutMs", "maxOutputBytes"},
	"resume": {"action", "token", "approve"},
}

// ReadRequest reads one JSON run request from r (at most MaxRequestBytes) and checks it: a known
// action, the members that action takes and no other, limits in range. An error names the
// request's line and column where it can, the member, and the fix.
func ReadRequest(r io.Reader) (RunRequest, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxRequestBytes+1))
	if err != nil {
		return RunRequest{}, fmt.Errorf("reading the request: %v", err)
	}
	if len(data) > MaxRequestBytes {
		return RunRequest{}, fmt.Errorf("the request is over %d bytes: give a long pipeline as a playbook file path", MaxRequestBytes)
	}
	var req RunRequest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return RunRequest{}, decodeError(data, err)
	}
	if dec.More() {
		off := dec.InputOffset()
		return RunRequest{}, fmt.Errorf("request:%s: one JSON object per request; remove what follows it", lineCol(data, off))
	}
	return req, req.check()
}

// check refuses an action the seed does not define and a member that action does not take.
func (req RunRequest) check() error {
	switch req.Action {
	case "run":
		if req.Token != "" || req.Approve != nil {
			return fmt.Errorf(`request: "token" and "approve" are resume's; a run takes %s`, strings.Join(requestFields["run"], ", "))
		}
		if strings.TrimSpace(req.Pipeline) == "" {
			return fmt.Errorf(`request: "pipeline" is missing: give an inline pipeline or a playbook file path`)
		}
		for name, v := range map[string]*int{"timeoutMs": req.TimeoutMs, "maxOutputBytes": req.MaxOutputBytes} {
			max := MaxTimeoutMs
			if name == "maxOutputBytes" {
				max = MaxMaxOutputBytes
			}
			if v != nil && (*v < 1 || *v > max) {
				return fmt.Errorf(`request: %q must be from 1 to %d, not %d (leave it out for the default)`, name, max, *v)
			}
		}
		_, err := req.Args()
		return err
	case "resume":
		if req.Pipeline != "" || req.ArgsJSON != nil || req.Cwd != "" || req.TimeoutMs != nil || req.MaxOutputBytes != nil {
			return fmt.Errorf(`request: a resume takes %s only; the run's pipeline, args and limits are the paused run's`, strings.Join(requestFields["resume"], ", "))
		}
		if req.Token == "" || req.Approve == nil {
			return fmt.Errorf(`request: a resume needs "token" (the resumeToken of the paused run) and "approve" (true runs the waiting step, false cancels the run)`)
		}
		return nil
	case "":
		return fmt.Errorf(`request: "action" is missing: "run" or "resume"`)
	default:
		return fmt.Errorf(`request: "action" is %q: give "run" or "resume"`, req.Action)
	}
}

// Args is the request's argsJson as the JSON object text Request.ArgsJSON takes ("" when none).
func (req RunRequest) Args() (string, error) {
	raw := bytes.TrimSpace(req.ArgsJSON)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", fmt.Errorf(`request: "argsJson": %v`, err)
		}
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
		return "", fmt.Errorf(`request: "argsJson" must be a JSON object (or a string holding one), e.g. "{\"tag\":\"work\"}"`)
	}
	return text, nil
}

// Engine is the request as the engine's Request, over workspace (a run's).
func (req RunRequest) Engine(workspace string) (Request, error) {
	args, err := req.Args()
	if err != nil {
		return Request{}, err
	}
	out := Request{Pipeline: req.Pipeline, ArgsJSON: args, Workspace: workspace, Cwd: req.Cwd, TimeoutMs: DefaultTimeoutMs, MaxOutputBytes: DefaultMaxOutputBytes}
	if req.TimeoutMs != nil {
		out.TimeoutMs = *req.TimeoutMs
	}
	if req.MaxOutputBytes != nil {
		out.MaxOutputBytes = *req.MaxOutputBytes
	}
	return out, nil
}

// decodeError says where and why a request does not decode.
func decodeError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("request:%s: %v: the request is one JSON object", lineCol(data, syn.Offset-1), syn)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf(`request:%s: the request must be a JSON object, not a JSON %s, e.g. {"action": "run", "pipeline": "flows/x.yml"}`, lineCol(data, typ.Offset-1), typ.Value)
	case errors.As(err, &typ):
		at := typ.Offset
		if i := bytes.LastIndex(data[:min(at, int64(len(data)))], []byte(`"`+typ.Field+`"`)); i >= 0 {
			at = int64(i) // the member's name, where a reader looks
		}
		return fmt.Errorf("request:%s: %q must be %s, not a JSON %s", lineCol(data, at), typ.Field, kindOf(typ.Field), typ.Value)
	case errors.Is(err, io.EOF):
		return fmt.Errorf(`request: empty: give one JSON object, e.g. {"action": "run", "pipeline": "flows/x.yml"}`)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		known := append(append([]string(nil), requestFields["run"]...), requestFields["resume"][1:]...)
		sort.Strings(known)
		return fmt.Errorf("request: unknown member %s: the members are %s", field, strings.Join(known, ", "))
	}
	return fmt.Errorf("request: %v", err)
}

func kindOf(field string) string {
	switch field {
	case "timeoutMs", "maxOutputBytes":
		return "a whole number"
	case "approve":
		return "true or false"
	}
	return "a string"
}

// lineCol is the 1-based line and column of byte offset off in data, "LINE:COL".
func lineCol(data []byte, off int64) string {
	if off < 0 {
		off = 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("%d:%d", line, col)
}
