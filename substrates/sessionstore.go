package substrates

// SessionStore is implemented by a substrate whose runner records an installation's sessions on
// this machine: where the store's database and the sessions' results are, for the commands that
// read recorded sessions (autonomy playbook reflect --session, promote). cmd/autonomy reaches it
// through the registry (registry.OnThisMachine), never by the substrate's name.
type SessionStore interface {
	// SessionStore is the database of the installation dir's sessions and the folder of their
	// results (RESULTS/ID.json).
	SessionStore(dir string) (db, results string)
}
