package ghactions

import (
	"path"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// resultsDir holds the installed result contracts and inline result schemas.
const resultsDir = dataDir + "/results"

// DataDir is the folder behaviors are installed under.
func (Substrate) DataDir() string { return dataDir }

// Reserved lists what a gh-actions installation of p owns besides the behaviors and resources
// it copies: the files compile generates, one workflow per actor among them.
func (Substrate) Reserved(p *ir.Profile) []substrates.Reserved {
	r := []substrates.Reserved{
		{Path: path.Dir(ManifestPath), Dir: true, What: "the gh-actions manifest"},
		{Path: HumanRequiredPath, What: "the approval gate's paths"},
		{Path: resultsDir, Dir: true, What: "the installed result schemas"},
		{Path: ControlWorkflowPath, What: "the control workflow"},
	}
	for _, a := range p.Actors {
		r = append(r, substrates.Reserved{Path: WorkflowPath(a.Name.Value), What: "the workflow of actor " + a.Name.Value})
	}
	return r
}
