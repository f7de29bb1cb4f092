package wire

// ManifestActor is an actor as the installed manifest (ManifestPath) lists it: what the runner
// inside a job (ghrun) and the trusted apply job (effect) read of an installation.
type ManifestActor struct {
	Name         string   `json:"name"`
	Kind         string   `json:"kind"`
	Workflow     string   `json:"workflow"`
	Capabilities []string `json:"capabilities"`
	// Result is the named result contract the apply job verifies ("" for none).
	Result string `json:"result,omitempty"`
	// ResultSchema is where an inline result schema the apply job verifies is installed.
	ResultSchema string `json:"resultSchema,omitempty"`
	Triggers     []struct {
		Kind   string   `json:"kind"`
		Params []string `json:"params"`
	} `json:"triggers"`
	Params []struct {
		Name   string `json:"name"`
		Source string `json:"source"`
	} `json:"params"`
}

// DispatchInputs are the inputs of the actor's workflow_dispatch trigger; ok is false when it
// has none.
func (a ManifestActor) DispatchInputs() (inputs []string, ok bool) {
	for _, t := range a.Triggers {
		if t.Kind == "dispatch" {
			return t.Params, true
		}
	}
	return nil, false
}

// Source is the source the actor's param name is bound to ("" when it has no such param).
func (a ManifestActor) Source(name string) string {
	for _, p := range a.Params {
		if p.Name == name {
			return p.Source
		}
	}
	return ""
}

// DispatchParam is the name of the dispatch input that takes source ("" for none).
func (a ManifestActor) DispatchParam(source string) string {
	inputs, _ := a.DispatchInputs()
	for _, p := range a.Params {
		if p.Source == source {
			for _, in := range inputs {
				if in == p.Name {
					return p.Name
				}
			}
		}
	}
	return ""
}
