package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	pbsource "github.com/autonomyhq/autonomy/playbook/internal/source"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// StepSpec is one step of a workflow playbook as a compiled GitHub Actions job carries it: JSON
// in the step's env (AUTONOMY_PLAYBOOK_STEP), read by `autonomy playbook step`. Argv is the
// command's words, split at compile time by Words; no shell ever reads them. References
// ($id.stdout, $args.NAME) are substituted per word at run time, as the engine does.
type StepSpec = resolved.StepSpec

// Data is what the steps of one run hand each other: the records of the steps run so far.
type Data struct {
	Results []record `json:"results"`
}

// MaxEncodedData caps the encoded step data handed from one job to the next (GitHub keeps at
// most 1 MB of outputs per job).
const MaxEncodedData = 900 * 1024

// EncodeData is d as one line: gzipped JSON in base64 (no newline, no delimiter to forge).
func EncodeData(d *Data) (string, error) {
	raw, err := json.Marshal(d)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(raw)
	zw.Close()
	s := base64.StdEncoding.EncodeToString(b.Bytes())
	if len(s) > MaxEncodedData {
		return "", fmt.Errorf("the step data is %d bytes encoded, over the %d GitHub carries between jobs: lower maxOutputBytes or the output of the steps before the approval", len(s), MaxEncodedData)
	}
	return s, nil
}

// DecodeData reads what EncodeData wrote ("" is no data).
func DecodeData(s string) (*Data, error) {
	d := &Data{}
	if strings.TrimSpace(s) == "" {
		return d, nil
	}
	if len(s) > MaxEncodedData {
		return nil, fmt.Errorf("the step data is %d bytes, over %d", len(s), MaxEncodedData)
	}
	z, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("the step data is not base64: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("the step data is not gzip: %v", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, MaxDataFile))
	if err != nil {
		return nil, fmt.Errorf("the step data: %v", err)
	}
	if err := json.Unmarshal(raw, d); err != nil {
		return nil, fmt.Errorf("the step data is not JSON: %v", err)
	}
	return d, nil
}

// quoteWord writes w so that Words reads it back as the one word w.
func quoteWord(w string) string { return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'" }

// RunStep runs one step of spec over the data of the steps before it, appends its record to d and
// returns the step's result. A step whose condition is false is recorded as skipped. workspace is
// the directory no step may leave. lookup reads the environment (args overrides and the cli
// step's base environment come from Engine.Env).
func (e *Engine) RunStep(ctx context.Context, spec StepSpec, d *Data, workspace string, lookup func(string) (string, bool)) (StepResult, error) {
	if lookup == nil {
		lookup = lookupOS
	}
	ws, err := filepath.Abs(workspace)
	if err == nil {
		ws, err = filepath.EvalSymlinks(ws)
	}
	if err != nil {
		return StepResult{}, fmt.Errorf("the workspace: %v", err)
	}
	switch spec.Namespace {
	case "cli", "http", "node", "web":
	default:
		return StepResult{}, fmt.Errorf("step %q: %s steps are not supported by this runtime", spec.ID, spec.Namespace)
	}
	args := map[string]string{}
	for name, def := range spec.Args {
		// A workflow_dispatch input left empty reads as "": the default then holds.
		if v, ok := lookup(name); ok && v != "" {
			args[name] = v
		} else if def != nil {
			args[name] = *def
		} else {
			return StepResult{}, fmt.Errorf("the arg %q has no default and no variable %s is set", name, name)
		}
	}
	if err := CheckLimits(0, spec.MaxOutputBytes); err != nil {
		return StepResult{}, fmt.Errorf("step %q: %v", spec.ID, err)
	}
	st := &state{Args: args, Workspace: ws, TimeoutMs: DefaultTimeoutMs, MaxOutputBytes: spec.MaxOutputBytes, Results: d.Results, CLI: spec.CLI, Web: spec.Web}
	if st.MaxOutputBytes <= 0 {
		st.MaxOutputBytes = DefaultMaxOutputBytes
	}
	w := &workflow.Workflow{}
	for _, id := range spec.Steps {
		w.Steps = append(w.Steps, &workflow.Step{ID: ir.String{Value: id}})
	}
	x := &exec{e: e, st: st, w: w, secrets: map[string]string{}}
	for _, name := range spec.Secrets {
		if v, ok := e.secret(name); ok && v != "" {
			x.secrets[name] = v
		}
	}
	rec := record{ID: spec.ID}
	if spec.Condition != "" {
		ok, err := x.condition(spec.Condition)
		if err != nil {
			return StepResult{}, fmt.Errorf("step %q: condition %q: %v", spec.ID, spec.Condition, err)
		}
		if !ok {
			rec.Status, rec.Reason = "skipped", "condition "+spec.Condition+" is false"
			d.Results = append(d.Results, rec)
			return e.viewWith(st, []record{rec}, x.redact)[0], nil
		}
	}
	words := make([]string, len(spec.Argv))
	for i, a := range spec.Argv {
		words[i] = quoteWord(a)
	}
	s := &workflow.Step{ID: ir.String{Value: spec.ID}, Namespace: spec.Namespace, Rest: strings.Join(words, " "),
		Stdin: ir.String{Value: spec.Stdin}, Output: ir.String{Value: spec.Output}, Cwd: ir.String{Value: spec.Cwd},
		TimeoutMs: ir.Int{Value: spec.TimeoutMs}}
	for _, kv := range spec.Env {
		s.Env = append(s.Env, workflow.EnvVar{Name: ir.String{Value: kv[0]}, Value: ir.String{Value: kv[1]}})
	}
	rec.Approved = spec.Approval
	err = x.step(ctx, s, &rec)
	if err == nil {
		var schema any
		if schema, err = spec.SchemaValue(); err == nil {
			err = x.verify(ctx, schema, specPostcondition(spec, s), &rec) // verify.go
		}
	}
	rec.Status = "ok"
	if err != nil {
		rec.Status = "failed"
	}
	d.Results = append(d.Results, x.carried(rec))
	res := e.viewWith(st, []record{rec}, x.redact)[0]
	if err != nil {
		return res, fmt.Errorf("step %q: %v", spec.ID, err)
	}
	return res, nil
}

// MaxDataFile is the largest step data file ReadDataFile reads: as much as DecodeData unpacks.
const MaxDataFile = 64 << 20

// ReadDataFile reads the step data kept in file, or, when there is none yet, the encoded data
// handed from the job before (seed; "" for the first job). file must be a regular file of at
// most MaxDataFile bytes: a FIFO, a device or a directory is refused without waiting on it.
func ReadDataFile(file, seed string) (*Data, error) {
	raw, err := pbsource.ReadFile(file, MaxDataFile)
	if errors.Is(err, fs.ErrNotExist) {
		return DecodeData(seed)
	}
	if err != nil {
		return nil, fmt.Errorf("--data %s: %s", file, pbsource.Reason(err))
	}
	d := &Data{}
	if err := json.Unmarshal(raw, d); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return d, nil
}

// WriteDataFile writes d to file atomically: a new temporary file beside it (0600; never an existing
// FIFO or device, which would block or swallow the write) renamed over it.
func WriteDataFile(file string, d *Data) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(raw)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// carried is the record as the step data carries it to the next job: with every secret the
// step used redacted, since the data travels through job outputs and env, which GitHub prints in
// its logs and cannot mask once encoded. A json output a redaction breaks is dropped (a later
// $id.json then fails naming it), never passed on unredacted.
func (x *exec) carried(rec record) record {
	rec.Stdout, rec.Reason = x.redact(rec.Stdout), x.redact(rec.Reason)
	if len(rec.JSON) > 0 {
		if r := x.redact(string(rec.JSON)); r != string(rec.JSON) {
			rec.JSON = nil
			if json.Valid([]byte(r)) {
				rec.JSON = []byte(r)
			}
		}
	}
	return rec
}
