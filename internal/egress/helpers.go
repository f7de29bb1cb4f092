package egress

// Helpers are the programs a Jail runs, which must be on PATH (Debian's packages bubblewrap and
// socat).
var Helpers = []string{"bwrap", "socat"}
