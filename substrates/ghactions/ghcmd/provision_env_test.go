package ghcmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
)

// manifestOnly is a substrate whose output is one manifest.
type manifestOnly struct {
	substrates.Substrate
	data string
}

func (m manifestOnly) Compile(*resolved.Profile) (substrates.Output, error) {
	return substrates.Output{Files: []substrates.File{{Path: ghactions.ManifestPath, Data: []byte(m.data)}}}, nil
}

type noFiles struct{ substrates.Substrate }

func (noFiles) Compile(*resolved.Profile) (substrates.Output, error) { return substrates.Output{}, nil }

// TestApprovalEnvironments: the environments are read from the compiled manifest, every actor's,
// sorted, each once; a manifest that is not JSON or is missing is an error.
func TestApprovalEnvironments(t *testing.T) {
	got, err := approvalEnvironments(manifestOnly{data: `{"actors":[{"name":"b","environments":["autonomy-b-x","autonomy-a-y"]},{"name":"c"},{"name":"a","environments":["autonomy-a-y"]}]}`}, nil)
	if err != nil || !slices.Equal(got, []string{"autonomy-a-y", "autonomy-b-x"}) {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := approvalEnvironments(manifestOnly{data: `{`}, nil); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("bad manifest: %v", err)
	}
	if _, err := approvalEnvironments(noFiles{}, nil); err == nil || !strings.Contains(err.Error(), "has no") {
		t.Errorf("no manifest: %v", err)
	}
}
