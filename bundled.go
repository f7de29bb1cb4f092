// Package autonomy holds what the autonomy binary ships besides its code: the example profiles of
// profiles/, embedded as they are in the repository, for autonomy init to scaffold from
// (internal/templates).
package autonomy

import "embed"

// Profiles is the profiles/ directory: one folder per bundled profile, every file of it
// (all: keeps the files whose names start with _ or ., such as playbooks/_index.md).
//
//go:embed all:profiles
var Profiles embed.FS
