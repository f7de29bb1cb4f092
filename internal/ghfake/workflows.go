package ghfake

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/substrates"
)

// WorkflowsFromOutput learns the workflows of a compiled gh-actions Output (see
// WorkflowsFromFiles).
func WorkflowsFromOutput(out substrates.Output) (map[string]Workflow, error) {
	files := make(map[string][]byte, len(out.Files))
	for _, f := range out.Files {
		files[f.Path] = f.Data
	}
	return WorkflowsFromFiles(files)
}

// WorkflowsFromFiles learns, from the .github/workflows/*.yml (or .yaml) files among files (by
// slash-separated path), each workflow's name, whether it has a workflow_dispatch trigger,
// the inputs that trigger declares, and the run-name it renders for a correlated dispatch.
// Other files are ignored. The result is keyed by file name, as Options.Workflows is.
func WorkflowsFromFiles(files map[string][]byte) (map[string]Workflow, error) {
	out := map[string]Workflow{}
	for p, data := range files {
		dir, file := path.Split(p)
		if dir != ".github/workflows/" || (path.Ext(file) != ".yml" && path.Ext(file) != ".yaml") {
			continue
		}
		wf, err := parseWorkflow(file, data)
		if err != nil {
			return nil, fmt.Errorf("ghfake: %s: %w", p, err)
		}
		out[file] = wf
	}
	return out, nil
}

// correlatedRunName is the run-name the compiler writes: the correlation input, when set,
// formatted into a constant template; otherwise a constant.
var correlatedRunName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\$\{\{ inputs\.` + CorrelationInput + ` && format\('((?:[^']|'')*)', inputs\.` + CorrelationInput + `\) \|\| '(?:[^']|'')*' \}\}$`)
})

func parseWorkflow(file string, data []byte) (Workflow, error) {
	var doc struct {
		Name    string    `yaml:"name"`
		RunName string    `yaml:"run-name"`
		On      yaml.Node `yaml:"on"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Workflow{}, err
	}
	wf := Workflow{Name: doc.Name}
	if wf.Name == "" {
		wf.Name = strings.TrimSuffix(strings.TrimSuffix(file, ".yml"), ".yaml")
	}
	if m := correlatedRunName().FindStringSubmatch(doc.RunName); m != nil {
		wf.RunName = strings.ReplaceAll(m[1], "''", "'")
	}
	on := &doc.On
	switch on.Kind {
	case yaml.ScalarNode:
		wf.Dispatch = on.Value == "workflow_dispatch"
	case yaml.SequenceNode:
		for _, n := range on.Content {
			wf.Dispatch = wf.Dispatch || n.Value == "workflow_dispatch"
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(on.Content); i += 2 {
			if on.Content[i].Value != "workflow_dispatch" {
				continue
			}
			wf.Dispatch = true
			if d := on.Content[i+1]; d.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(d.Content); j += 2 {
					if d.Content[j].Value != "inputs" || d.Content[j+1].Kind != yaml.MappingNode {
						continue
					}
					in := d.Content[j+1].Content
					for k := 0; k+1 < len(in); k += 2 {
						wf.Inputs = append(wf.Inputs, in[k].Value)
					}
				}
			}
		}
	}
	return wf, nil
}
