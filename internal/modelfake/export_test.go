package modelfake

// SetCodexYield sets how long codex is asked to wait for a command and for
// each poll of it, for a test that needs a command to outlive the first
// wait; the returned function restores the defaults.
func SetCodexYield(execMS, pollMS int) (restore func()) {
	e, p := execYieldMS, pollYieldMS
	execYieldMS, pollYieldMS = execMS, pollMS
	return func() { execYieldMS, pollYieldMS = e, p }
}
