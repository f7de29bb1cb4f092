package ghrun

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// Where a session's params live. GitHub's workflow run objects do not report the inputs a run
// was dispatched with, and the job token of a launcher can write nothing else a later process
// could read back without widening it (a ref needs contents: write, a variable a token GitHub
// never gives a job). What every token that may list runs can read is the run's display title,
// the rendered run-name, which already echoes the correlation input. So the correlation input
// carries the params too: "<16 hex digits>.<base64url of the params' JSON>", and any process,
// with actions: read only, decodes them from the run's display_title. The record is bounded
// (MaxParamsBytes) so the title stays short; a launch with larger params is refused.

// MaxParamsBytes bounds the JSON of a session's params: they ride in the run's title.
const MaxParamsBytes = 512

// encodeCorrelation is the correlation input of a launch: its id and its params.
func encodeCorrelation(id string, params ir.LaunchParams) (string, error) {
	if params == nil {
		params = ir.LaunchParams{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(params); err != nil { // map keys sorted: the same params, the same bytes
		return "", err
	}
	data := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if len(data) > MaxParamsBytes {
		return "", fmt.Errorf("its params are %d bytes of JSON, more than the %d a GitHub session keeps (they ride in the run's title so that any process can read them back): pass a reference instead (an issue number, a path in the repository) and put the text there", len(data), MaxParamsBytes)
	}
	return id + "." + base64.RawURLEncoding.EncodeToString(data), nil
}

// decodeTitle reads the params back from a run's display title, "<actor> [<correlation>]"; ok
// is false for a title that carries none (a run not dispatched by a launch, or a cut one).
func decodeTitle(agent, title string) (ir.LaunchParams, bool) {
	rest, ok := strings.CutPrefix(title, agent+" [")
	if !ok {
		return nil, false
	}
	rest, ok = strings.CutSuffix(rest, "]")
	if !ok {
		return nil, false
	}
	_, enc, ok := strings.Cut(rest, ".")
	if !ok {
		return nil, false
	}
	data, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(data) > MaxParamsBytes {
		return nil, false
	}
	var p ir.LaunchParams
	if json.Unmarshal(data, &p) != nil || p == nil {
		return nil, false
	}
	return p, true
}
