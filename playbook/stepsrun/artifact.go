package stepsrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/autonomyhq/autonomy/playbook/steps"
)

// extensions are the file extensions of the artifact types.
var extensions = map[string]string{
	"markdown": ".md", "json": ".json", "mermaid": ".mmd", "chartjs": ".json",
	"html_css": ".html", "javascript": ".js", "typescript": ".ts",
}

// writeArtifact writes the ## ARTIFACTS result, the last step's output, as artifact.EXT in the
// artifacts directory: json (and chartjs) must be one JSON value. Nil without ## ARTIFACTS.
func writeArtifact(p *steps.Playbook, st *state) (*Artifact, error) {
	if p.Artifact == nil {
		return nil, nil
	}
	typ := p.Artifact.Value
	content := ""
	for i := len(st.Records) - 1; i >= 0; i-- {
		if st.Records[i].Status == "ok" && st.Records[i].Output != "" {
			content = st.Records[i].Output
			break
		}
	}
	if typ == "json" || typ == "chartjs" {
		content = unfence(content)
		if !json.Valid([]byte(content)) {
			return nil, fmt.Errorf("%s: the artifact is declared %s, and the last step's output is not JSON: %s", at(p.File, p.Artifact.Pos), typ, clip(content))
		}
	}
	a := &Artifact{Type: typ, Content: content}
	if st.ArtifactsDir == "" {
		return a, nil
	}
	ext, ok := extensions[typ]
	if !ok {
		ext = ".txt"
	}
	if err := os.MkdirAll(st.ArtifactsDir, 0o755); err != nil {
		return nil, fmt.Errorf("writing the artifact: %v", err)
	}
	a.Path = filepath.Join(st.ArtifactsDir, "artifact"+ext)
	if err := os.WriteFile(a.Path, []byte(content), 0o644); err != nil {
		return nil, fmt.Errorf("writing the artifact: %v", err)
	}
	return a, nil
}
