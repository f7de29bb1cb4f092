package ghactions

import (
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghevent"
)

// TestExpressionsAgreeWithGhevent evaluates the gate and the command condition the workflows
// carry, as GitHub would, against the Go reading the local event source applies
// (ghevent.Trusted, ghevent.Addressed): one logic, two forms, never two answers.
func TestExpressionsAgreeWithGhevent(t *testing.T) {
	const rolesJSON = `["OWNER","MEMBER","COLLABORATOR"]`
	events := []string{"issue_comment", "issues", "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment", "discussion", "discussion_comment", "push", "workflow_dispatch"}
	actions := []string{"created", "opened", "labeled", "edited", "submitted", "answered", "synchronize"}
	for _, ev := range events {
		for _, action := range actions {
			for _, role := range ghevent.AllRoles {
				for _, same := range []bool{false, true} {
					g := gate(ev, rolesJSON)
					author := ghevent.AuthorObject(ev)
					headRepo := "fork/r"
					if same {
						headRepo = "o/r"
					}
					ctx := map[string]any{"github.event.action": action, "github.repository": "o/r", "github.event.pull_request.head.repo.full_name": headRepo}
					if author != "" {
						ctx["github.event."+author+".author_association"] = role
					}
					got := g == "" || evalExpr(t, "${{ "+g+" }}", ctx) == "true"
					if want := ghevent.Trusted(ev, action, role, same, ghevent.TrustedRoles); got != want {
						t.Errorf("%s/%s by %s (same repo %v): the workflow's gate says %v, ghevent.Trusted %v", ev, action, role, same, got, want)
					}
				}
			}
		}
	}
	bodies := []string{"/agent reviewer", "/agent reviewer please", "/agent reviewer\nplease", "/agent reviewer\r\nplease", "/agent reviewers", "/agent reviewer\tx", " /agent reviewer", "/agent", "/agent ", "/agentreviewer", "hello", "", "/agent status",
		"/Agent Reviewer", "/AGENT REVIEWER please", "/Agent reviewer\nx", "/agent revıewer", "/agent ſtatus", "/agent reviewer\u212a", "/AGENTreviewer"}
	for _, name := range []string{"reviewer", ""} {
		for _, body := range bodies {
			got := evalExpr(t, "${{ "+commandCond(name)+" }}", map[string]any{"github.event.comment.body": body}) == "true"
			if want := ghevent.Addressed(body, name); got != want {
				t.Errorf("%q addressed to %q: the workflow says %v, ghevent.Addressed %v", body, name, got, want)
			}
		}
	}
}
