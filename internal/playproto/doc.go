// Package playproto is the protocol between the playbook runtimes (playbook/engine runs workflow
// playbooks, playbook/stepsrun step playbooks, playbook/overlay weaves overlays) and the runners
// that host them (the local runner, a gh-actions job): the envelope a run prints and its
// statuses, how a resume token is kept (HashToken) and the keys a run's pause and checkpoint
// are kept under in the store of paused runs (internal/store), a person's answer, and what
// weaving overlays into a session's skill gave. It is data only: it imports neither playbook
// nor a substrate, so both sides of the protocol point down to it.
package playproto
