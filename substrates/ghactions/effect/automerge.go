package effect

import (
	"context"

	"github.com/autonomyhq/autonomy/internal/ghwrite"
)

// armAutoMerge enables auto-merge on a pull request (ghwrite.ArmAutoMerge), so it merges once
// branch protection is satisfied: the agent-review status and the required checks on its head.
// Nobody merges it by hand, and nothing merges it sooner. It is armed for head, the commit the
// proposal pushed, only (GraphQL's expectedHeadOid): if the pull request's head is another,
// GitHub refuses, and nothing is armed.
func (e *Env) armAutoMerge(ctx context.Context, nodeID, head string) error {
	return ghwrite.ArmAutoMerge(ctx, e.Client, e.GraphQLURL, nodeID, head)
}
