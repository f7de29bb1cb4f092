package ir

import "strings"

// YesNo reads a person's answer to a yes/no question through the human seam (a step playbook's
// confirm, asked locally or on the work item): yes, y or true; no, n or false (any case,
// surrounding space ignored). ok is false for anything else. It is here, with the Session
// contract, because both the playbook runtimes and the substrates' trusted side read answers.
func YesNo(s string) (yes, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yes", "y", "true":
		return true, true
	case "no", "n", "false":
		return false, true
	}
	return false, false
}
