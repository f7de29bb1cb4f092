package effect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/internal/strictjson"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// maxResultFile bounds the result file the apply job reads (the agent job caps its copy too).
const maxResultFile = 1 << 20

// NoResult is a session that did not deliver a valid result: the apply job fails with it, so the
// run ends failed, saying what was missing or invalid. Done is verified, never presumed.
type NoResult struct{ Reason string }

func (e *NoResult) Error() string { return e.Reason }

// VerifyResult is the trusted side's check that the run of an actor with a result contract is
// done: the result it delivered through submit_result (an effect applied has passed its checks;
// for a declared contract, its output member), else the result file the agent job exported with
// its safe outputs (resultFile: the final message, or the agent's structured result), must
// validate against the contract and, for the default contract, say done. A nil contract (an
// actor that opts out, or a reviewer, whose verdict its review job checks) is not checked here.
func VerifyResult(contract *ir.Result, applied []Applied, resultFile string) error {
	if contract == nil {
		return nil
	}
	data, source, err := delivered(contract, applied, resultFile)
	if err != nil {
		return err
	}
	diags, err := ir.ValidateResult(contract, source, data)
	if err != nil {
		return err
	}
	if len(diags) > 0 {
		return &NoResult{"the session's result is invalid, so the run is not done:\n" + diags.String()}
	}
	if contract.Named.Value != ir.DefaultContract {
		return nil
	}
	status, summary, err := tools.ReportedStatus(data)
	if err != nil {
		return &NoResult{fmt.Sprintf("the session's result (%s): %v", source, err)}
	}
	if status == "failed" {
		return &NoResult{"the agent reported its work failed: " + summary}
	}
	return nil
}

// InstalledContract is the result contract the apply job verifies for the installed actor a, as
// the installation at sha in dir says: a named contract by name, an inline schema read from where
// it is installed; nil for none.
func InstalledContract(ctx context.Context, dir, sha string, a InstalledActor) (*ir.Result, error) {
	switch {
	case a.Result != "":
		if _, ok := ir.ResultContracts[a.Result]; !ok {
			return nil, fmt.Errorf("%s:%s: actor %q: unknown result contract %q (known: %s)", sha, manifestPath, a.Name, a.Result, strings.Join(ir.ContractNames(), ", "))
		}
		return &ir.Result{Named: ir.String{Value: a.Result}}, nil
	case a.ResultSchema != "":
		data, err := gitShow(ctx, dir, sha, a.ResultSchema)
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s:%s: the result schema of actor %q: %v", sha, a.ResultSchema, a.Name, err)
		}
		delete(doc, "//")
		return &ir.Result{Inline: doc}, nil
	}
	return nil, nil
}

// delivered is the result a session delivered and where it came from: its last submit_result
// that passed the checks, else the result file.
func delivered(contract *ir.Result, applied []Applied, resultFile string) ([]byte, string, error) {
	for i := len(applied) - 1; i >= 0; i-- {
		if a := applied[i]; a.Effect.Tool == tools.SubmitResult && a.Refused == "" {
			if contract.Named.Value == ir.DefaultContract {
				return a.Effect.Input, "submit_result", nil
			}
			var call struct {
				Output json.RawMessage `json:"output"`
			}
			if err := strictjson.Unmarshal(a.Effect.Input, &call); err != nil {
				return nil, "", &NoResult{"the session's result (submit_result) is refused, so the run is not done: " + err.Error()}
			}
			if len(call.Output) > 0 {
				return call.Output, "submit_result's output", nil
			}
			break
		}
	}
	none := &NoResult{"the session delivered no result, so the run is not done: it did not call " + tools.SubmitResult +
		", and its final message left no result file (a session is done only with a result that satisfies " + contractName(contract) + ")"}
	data, err := readResult(resultFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", none
	}
	if errors.Is(err, errTooLarge) {
		return nil, "", &NoResult{fmt.Sprintf("the session's result file is over %d bytes", maxResultFile)}
	}
	if err != nil {
		return nil, "", err
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, "", none
	}
	return data, "the final message (" + resultFile + ")", nil
}

// contractName names a contract: its name, or its inline schema.
func contractName(r *ir.Result) string {
	if r.Named.Value != "" {
		return r.Named.Value
	}
	return "its inline result schema"
}

// errTooLarge is a file over maxResultFile bytes.
var errTooLarge = fmt.Errorf("larger than %d bytes, the cap on a result", maxResultFile)

// readResult reads a file the model's job handed over (a result, a verdict): at most
// maxResultFile bytes, errTooLarge past them.
func readResult(path string) ([]byte, error) {
	data, err := bounded.ReadFile(path, maxResultFile)
	if bounded.IsTooLarge(err) {
		return nil, fmt.Errorf("%s is %w", path, errTooLarge)
	}
	return data, err
}
