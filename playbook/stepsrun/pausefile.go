package stepsrun

import "encoding/json"

// Pause is a paused run as `autonomy playbook run --pause-file` writes it: the hash of its
// resume token, its session and its saved state. A trusted job (gh resume) reads it as JSON,
// never opening the database the run wrote.
type Pause struct {
	TokenHash string          `json:"tokenHash"`
	Session   string          `json:"session,omitempty"`
	State     json.RawMessage `json:"state"`
}
