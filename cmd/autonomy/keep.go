package main

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/autonomyhq/autonomy/substrates"
)

// keepUsage is the help of --keep, the same on compile and check.
const keepUsage = "a file of the directory to keep as it is when it already exists there with other content, e.g. your own .gitignore (repeatable; the profile can list them in policy.box.autonomy.keep)"

// keepFlag declares --keep PATH, repeatable.
func keepFlag(fs *pflag.FlagSet, keep *[]string) {
	fs.StringArrayVar(keep, "keep", nil, keepUsage)
}

// applyKeep adds the --keep paths to output.Keep. A path the compile does not write is a usage
// error: keeping it would mean nothing, and it is most likely misspelled.
func applyKeep(output *substrates.Output, keep []string) error {
	for _, k := range keep {
		p := path.Clean(filepath.ToSlash(k))
		i, found := slices.BinarySearchFunc(output.Files, p, func(f substrates.File, p string) int { return strings.Compare(f.Path, p) })
		if !found {
			return usageError("--keep %q: the %s compile writes no such file (paths are relative to --dir; see compile --dry-run)", k, output.Target)
		}
		if !slices.Contains(output.Keep, output.Files[i].Path) {
			output.Keep = append(output.Keep, output.Files[i].Path)
		}
	}
	return nil
}
