package effect

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// maxResultFile bounds the result file the apply job reads (the agent job caps its copy too).
const maxResultFile = 1 << 20

// NoResult is a session that did not deliver a valid result: the apply job fails with it, so the
// run ends failed, saying what was missing or invalid. Done is verified, never presumed.
type NoResult struct{ Reason string }

func (e *NoResult) Error() string { return e.Reason }

// VerifyResult is the trusted side's check that the run of an actor whose installed result
// contract is the default (autonomy.result.v1) is done: the result it delivered through
// submit_result (an effect applied has passed its checks), else the result file the agent job
// exported with its safe outputs (resultFile, the final message), must validate against the
// contract and say done. An actor with no such contract is not checked here.
func VerifyResult(a InstalledActor, applied []Applied, resultFile string) error {
	if a.Result != ir.DefaultContract {
		return nil
	}
	data, source, err := delivered(applied, resultFile)
	if err != nil {
		return err
	}
	diags, err := ir.ValidateResult(ir.DefaultResult, source, data)
	if err != nil {
		return err
	}
	if len(diags) > 0 {
		return &NoResult{"the session's result is invalid, so the run is not done:\n" + diags.String()}
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

// delivered is the result a session delivered and where it came from: its last submit_result
// that passed the checks, else the result file.
func delivered(applied []Applied, resultFile string) ([]byte, string, error) {
	for i := len(applied) - 1; i >= 0; i-- {
		if a := applied[i]; a.Effect.Tool == tools.SubmitResult && a.Refused == "" {
			return a.Effect.Input, "submit_result", nil
		}
	}
	none := &NoResult{"the session delivered no result, so the run is not done: it did not call " + tools.SubmitResult +
		", and its final message left no result file (a session is done only with a result that satisfies " + ir.DefaultContract + ")"}
	f, err := os.Open(resultFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", none
	}
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxResultFile+1))
	if err != nil {
		return nil, "", err
	}
	if len(data) > maxResultFile {
		return nil, "", &NoResult{fmt.Sprintf("the session's result file is over %d bytes", maxResultFile)}
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, "", none
	}
	return data, "the final message (" + resultFile + ")", nil
}
