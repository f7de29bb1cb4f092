package kubernetes

import (
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// DataDir is the folder behaviors are installed under, in the session's container under
// InstallDir (they travel in ConfigMapInstall, not as files of the output).
func (Substrate) DataDir() string { return dataDir }

// Reserved lists what an installation owns: the kustomization's folder.
func (Substrate) Reserved(*ir.Profile) []substrates.Reserved {
	return []substrates.Reserved{{Path: Dir, Dir: true, What: "the kustomization kubectl apply -k installs"}}
}
