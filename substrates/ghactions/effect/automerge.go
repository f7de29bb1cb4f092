package effect

import (
	"context"

	"github.com/autonomyhq/autonomy/internal/ghwrite"
)

// armAutoMerge enables auto-merge on a pull request (ghwrite.ArmAutoMerge), so it merges once
// branch protection is satisfied: the agent-review status and the required checks on its head.
// Nobody merges it by hand, and nothing merges it sooner.
func (e *Env) armAutoMerge(ctx context.Context, nodeID string) error {
	return ghwrite.ArmAutoMerge(ctx, e.Client, e.GraphQLURL, nodeID, "")
}
