package ghcmd

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
)

// approvalEnvironments compiles p onto gh-actions and reads, from the manifest the installation
// would carry, the GitHub environments its approval steps are gated by (actors[].environments),
// sorted and without duplicates.
func approvalEnvironments(sub substrates.Substrate, p *resolved.Profile) ([]string, error) {
	out, err := sub.Compile(p)
	if err != nil {
		return nil, err
	}
	for _, f := range out.Files {
		if f.Path != ghactions.ManifestPath {
			continue
		}
		var m struct {
			Actors []struct {
				Environments []string `json:"environments"`
			} `json:"actors"`
		}
		if err := json.Unmarshal(f.Data, &m); err != nil {
			return nil, fmt.Errorf("the compiled manifest: %v", err)
		}
		var envs []string
		for _, a := range m.Actors {
			envs = append(envs, a.Environments...)
		}
		slices.Sort(envs)
		return slices.Compact(envs), nil
	}
	return nil, fmt.Errorf("the compiled installation has no %s", ghactions.ManifestPath)
}
