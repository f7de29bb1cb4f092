package ghexpr

import "testing"

// TestEval: the operators and functions the compiled workflows use evaluate as GitHub's do, and
// what Eval cannot evaluate is an error, not a guess.
func TestEval(t *testing.T) {
	ctx := map[string]any{"github.actor": "Octocat", "github.repository_owner": "octocat", "inputs.KIND": ""}
	for expr, want := range map[string]string{
		"plain": "plain",
		"${{ github.actor == github.repository_owner && 'OWNER' || 'COLLABORATOR' }}": "OWNER",
		"${{ endsWith(github.actor, '[BOT]') && 'NONE' || 'X' }}":                     "X",
		"${{ inputs.KIND || 'workflow_dispatch' }}":                                   "workflow_dispatch",
		"${{ format('a-{0}-{1}', github.actor, 'b') }}":                               "a-Octocat-b",
		"${{ !startsWith(github.actor, 'octo') }}":                                    "false",
		"${{ contains(fromJSON('[\"x\",\"Y\"]'), 'y') }}":                             "true",
		"${{ inputs.MISSING }}":                                                       "",
		"refs/${{ github.actor }}/${{ inputs.KIND || 'x' }}!":                         "refs/Octocat/x!",
		"${{ 1 == 2 }} ${{ 2 == '2' }} ${{ inputs.MISSING == 0 }} ${{ 'a' == 0 }}":    "false true true false",
		"${{ always() && !cancelled() }}":                                             "true",
		"${{ 1.5 }}":                                                                  "1.5",
	} {
		if got, err := Eval(expr, ctx); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", expr, got, err, want)
		}
	}
	for _, bad := range []string{"${{ toJSON(github) }}", "${{ github.actor == }}", "${{ fromJSON('{') }}", "${{ 1 < 2 }}"} {
		if got, err := Eval(bad, ctx); err == nil {
			t.Errorf("%s = %q, want an error", bad, got)
		}
	}
}
