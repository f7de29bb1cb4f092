package ghrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
)

// runDetails is GitHub's answer to a dispatch asked for its run's details (since February 2026:
// 200 with the run's id and URLs instead of 204). go-github v62 knows neither the request field
// nor the answer, so both are ours.
type runDetails struct {
	ID      int64  `json:"workflow_run_id"`
	RunURL  string `json:"run_url"`
	HTMLURL string `json:"html_url"`
}

// dispatchRequest is the body of "Create a workflow dispatch event".
type dispatchRequest struct {
	Ref              string         `json:"ref"`
	Inputs           map[string]any `json:"inputs,omitempty"`
	ReturnRunDetails bool           `json:"return_run_details,omitempty"`
}

// dispatch sends a workflow_dispatch asking for the run's details. A server that answers 204
// (an older GitHub Enterprise Server, or one ignoring the field) gives zero details: the caller
// then finds the run by its correlation id. A server that refuses the field (422 naming it) is
// asked again without it.
func (r *Runner) dispatch(ctx context.Context, file, ref string, inputs map[string]any) (runDetails, error) {
	send := func(withDetails bool) (runDetails, error) {
		var d runDetails
		_, err := r.do(ctx, func(ctx context.Context) (*github.Response, error) {
			d = runDetails{}
			req, err := r.gh.NewRequest(http.MethodPost, fmt.Sprintf("repos/%s/%s/actions/workflows/%s/dispatches", r.owner, r.repo, file),
				dispatchRequest{Ref: ref, Inputs: inputs, ReturnRunDetails: withDetails})
			if err != nil {
				return nil, err
			}
			return r.gh.Do(ctx, req, &d)
		})
		return d, err
	}
	d, err := send(true)
	var ge *github.ErrorResponse
	if err != nil && statusOf(err) == http.StatusUnprocessableEntity && errors.As(err, &ge) && strings.Contains(ge.Error(), "return_run_details") {
		return send(false)
	}
	return d, err
}
