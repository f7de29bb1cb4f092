// Package store keeps autonomy's durable runtime state in SQLite: the local runner's sessions,
// its trigger executor's schedule state and an audit log of events, and the paused playbook runs
// (pauses and step checkpoints) of every substrate: the local runner's, in its state.db, and a
// gh-actions job's, in the playbooks.db it hands the next job. It belongs to no substrate, so the
// gh-actions path and the playbook runtimes use it without depending on the local substrate.
//
// Many processes share one database file at once: a burst of CLI launches, the supervisors that
// record their sessions' exits, a serve loop. So the file runs in WAL mode, where readers never
// wait for the writer; every write is one BEGIN IMMEDIATE transaction, which takes the write lock
// up front and waits for it (busy_timeout) instead of failing half-way when another process wrote
// first; and every statement of a write goes through the *Tx the transaction hands out. A process
// killed at any moment leaves the last committed state, which the next Open sees.
//
// The schema is versioned by PRAGMA user_version and brought up to date by Open, so a newer
// build migrates an older file in place and an older build refuses a newer file rather than
// misreading it.
package store

import _ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
