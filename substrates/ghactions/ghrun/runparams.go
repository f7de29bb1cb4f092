package ghrun

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"

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

// Correlation is the correlation input (wire.CorrelationInput) of a launch with params: a new
// random id, and the params, which any process then reads back from the run's title. It is an
// error when the params are too large to ride there (MaxParamsBytes).
func Correlation(params ir.LaunchParams) (string, error) {
	var raw [8]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("making a correlation id: %w", err)
	}
	return encodeCorrelation(hex.EncodeToString(raw[:]), params)
}

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

// RunFacts are the actor whose workflow a run is of, and what GitHub reports of the run that a job's expressions read: the user who
// dispatched it (github.actor), its event (github.event_name), and the inputs it was dispatched
// with, decoded from its title as any process reads them (not from the launcher's memory).
type RunFacts struct {
	Agent, Actor, Event string
	Inputs              ir.LaunchParams
}

// Facts returns the facts of run id of the fleet's workflows; ok is false for an id that is no
// run of them, or a run whose title carries no inputs.
func (r *Runner) Facts(ctx context.Context, id string) (RunFacts, bool, error) {
	n, ok := parseRunID(id)
	if !ok {
		return RunFacts{}, false, nil
	}
	run, err := r.getRun(ctx, n)
	if run == nil || err != nil {
		return RunFacts{}, false, err
	}
	agent, ok := r.agentOf(run)
	if !ok {
		return RunFacts{}, false, nil
	}
	in, ok := decodeTitle(agent, cmp.Or(run.GetDisplayTitle(), run.GetName()))
	if !ok {
		return RunFacts{}, false, nil
	}
	return RunFacts{Agent: agent, Actor: run.GetActor().GetLogin(), Event: run.GetEvent(), Inputs: in}, true, nil
}

// Login is the login the runner's token acts as (GET /user): the actor of the runs it
// dispatches, as GitHub reports it.
func (r *Runner) Login(ctx context.Context) (string, error) {
	var u *github.User
	_, err := r.do(ctx, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		u, resp, err = r.gh.Users.Get(ctx, "")
		return resp, err
	})
	if err != nil {
		return "", fmt.Errorf("who the token acts as (GET /user): %v", err)
	}
	return u.GetLogin(), nil
}
