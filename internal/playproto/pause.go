package playproto

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// HashToken is how a resume token is stored: its SHA-256, hex. A token is never stored itself.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ContinueKey is the key under which a runner keeps the state of a session's run that was
// answered (approved) and waits for its process to continue it.
func ContinueKey(session string) string { return "continue:" + session }

// SessionKey is the key of the checkpoint of a session's step playbook run in the store.
func SessionKey(session string) string { return "steps:" + session }

// StepsKind marks a saved state as a step playbook run's (a workflow run's state has none).
const StepsKind = "steps"

// IsStepsState reports whether raw is the saved state of a step playbook run.
func IsStepsState(raw []byte) bool {
	var s struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(raw, &s) == nil && s.Kind == StepsKind
}

// Answer is a person's answer to what a paused run waits for: a step playbook's elicitation,
// or a workflow's approval (Approve or Deny).
type Answer struct {
	// Text answers an input or a select (and yes/no a confirm).
	Text string
	// Approve and Deny answer a confirm (yes, no) or an approval.
	Approve, Deny bool
	// Cancel cancels the run instead.
	Cancel bool
}
