package playbook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/overlay"
	"github.com/autonomyhq/autonomy/playbook/steps"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// Resolve classifies every behavior of a validated profile once, for validate and every
// substrate's Compile to read (package resolved says why the model lives there): each behavior
// file is read, detected and parsed once however many actors share it, and the overlay package
// is matched against each skill actor once. The diagnostics are Profile's: the playbooks' own
// problems, each in its file.
func Resolve(p *ir.Profile) (*resolved.Profile, ir.Diagnostics) {
	pp, diags := Profile(p)
	r := resolved.Of(p)
	for file, f := range pp.Behaviors {
		b := &resolved.Behavior{File: filepath.Join(p.Dir, filepath.FromSlash(file))}
		switch f {
		case Capsule:
			b.Kind = resolved.Capsule
			b.Lifecycle, b.Verification = pp.Lifecycle(p, file)
		case Steps:
			b.Kind = resolved.Steps
			resolveSteps(b)
		case Workflow:
			b.Kind = resolved.Workflow
			resolveWorkflow(b, resolved.CLIOf(p.Policy), resolved.WebOf(p.Policy))
		}
		r.Behaviors[file] = b
	}
	r.OverlayFolder, r.OverlayFolderPos = OverlayFolder(p)
	if pp.Package != nil && len(pp.Package.Overlays) > 0 {
		persona, _ := ReadPersona(p)
		data, err := json.Marshal(persona)
		if err != nil {
			data = []byte("{}") // a Persona always marshals
		}
		r.Overlays = &resolved.Overlays{Dir: pp.OverlayDir, Index: overlay.Index(pp.Package.Overlays),
			IndexFile: overlay.IndexFile, Persona: data}
		r.Woven = map[string]bool{}
		resolveWeaving(r, pp.Package.Overlays)
	}
	return r, diags
}

// resolveSteps parses a step playbook: its problems, and its first elicitation when it has none.
func resolveSteps(b *resolved.Behavior) {
	data, err := readHead(b.File)
	if err != nil {
		return
	}
	sp, diags := steps.Check(b.File, data)
	b.Diagnostics = diags
	if sp == nil || diags.HasErrors() {
		return
	}
	if el := firstElicit(sp.Steps); el != nil {
		pos := el.Pos
		b.Elicit = &pos
	}
}

// firstElicit is the first @elicit of the steps (sub-steps included), or nil.
func firstElicit(ss []*steps.Step) *steps.Elicit {
	for _, s := range ss {
		if s.Elicit != nil {
			return s.Elicit
		}
		for _, br := range s.Branches {
			if e := firstElicit(br.Steps); e != nil {
				return e
			}
		}
	}
	return nil
}

// resolveWorkflow parses a workflow playbook into the steps a substrate compiles.
func resolveWorkflow(b *resolved.Behavior, cli *resolved.CLIPolicy, web *resolved.WebPolicy) {
	data, err := os.ReadFile(b.File)
	if err != nil {
		return
	}
	w, diags := workflow.Check(b.File, data)
	b.Diagnostics = diags
	if w == nil || diags.HasErrors() {
		return
	}
	ids := make([]string, len(w.Steps))
	for i, s := range w.Steps {
		ids[i] = s.ID.Value
	}
	var args map[string]*string
	if len(w.Args) > 0 {
		args = map[string]*string{}
		for _, arg := range w.Args {
			var def *string
			if arg.Default != nil {
				v := arg.Default.Value
				def = &v
			}
			args[arg.Name.Value] = def
		}
	}
	out := &resolved.WorkflowPlaybook{File: b.File}
	for _, s := range w.Steps {
		st := workflowStep(s, ids, args)
		st.Spec.CLI, st.Spec.Web = cli, web
		out.Steps = append(out.Steps, st)
	}
	b.Workflow = out
}

// workflowStep is one step of a workflow playbook with the spec `autonomy playbook step` reads.
func workflowStep(s *workflow.Step, ids []string, args map[string]*string) *resolved.WorkflowStep {
	argv, err := engine.Words(s.Rest)
	if argv == nil {
		argv = []string{}
	}
	spec := resolved.StepSpec{ID: s.ID.Value, Namespace: s.Namespace, Argv: argv, Stdin: s.Stdin.Value,
		Condition: s.Condition.Value, Output: s.Output.Value, Cwd: s.Cwd.Value, TimeoutMs: s.TimeoutMs.Value,
		Approval: s.IsApproval(), Steps: ids, Secrets: stepSecrets(s), Args: args}
	for _, ev := range s.Env {
		spec.Env = append(spec.Env, [2]string{ev.Name.Value, ev.Value.Value})
	}
	if s.Schema != nil {
		spec.Schema, _ = json.Marshal(s.Schema) // JSON values from the YAML: they marshal
	}
	if pc := s.PostconditionStep(); pc != nil {
		pargv, perr := engine.Words(pc.Rest)
		spec.Postcondition = &resolved.Command{Namespace: pc.Namespace, Argv: pargv}
		if err == nil {
			err = perr
		}
	}
	out := &resolved.WorkflowStep{Spec: spec, Pos: s.Pos, CommandPos: s.Command.Pos}
	if err != nil {
		out.WordsError = err.Error()
	}
	if s.IsApproval() {
		out.Prompt = s.Prompt.Value
	}
	return out
}

// stepSecrets are the secret handles a step reads, in order of first use.
func stepSecrets(s *workflow.Step) []string {
	var out []string
	vals := []string{s.Command.Value, s.Stdin.Value, s.Condition.Value}
	for _, ev := range s.Env {
		vals = append(vals, ev.Value.Value)
	}
	for _, v := range vals {
		for _, m := range workflow.RefPattern().FindAllStringSubmatch(v, -1) {
			if m[1] == workflow.SecretsRef && !slices.Contains(out, m[2]) {
				out = append(out, m[2])
			}
		}
	}
	return out
}

// resolveWeaving records which skill actors an overlay targets by role, operator or skill name
// (each skill read once for its declared name), and the patterns of the runtime targets, which
// resolved.Profile.Weaves matches per substrate.
func resolveWeaving(r *resolved.Profile, overlays []*overlay.Overlay) {
	byActor := make([]*overlay.Overlay, 0, len(overlays))
	for _, o := range overlays {
		own := &overlay.Overlay{}
		for _, t := range o.Targets {
			if t.Kind.Value == "runtime" {
				r.Overlays.Runtimes = append(r.Overlays.Runtimes, t.Pattern())
			} else {
				own.Targets = append(own.Targets, t)
			}
		}
		byActor = append(byActor, own)
	}
	names := map[string]string{}
	for _, a := range r.Actors {
		if !a.Skill || a.IsHuman() {
			continue
		}
		name, read := names[a.BehaviorFile]
		if !read {
			text, _ := os.ReadFile(filepath.Join(r.Dir, filepath.FromSlash(a.BehaviorFile)))
			name, _ = ir.BehaviorName(a.BehaviorFile, text)
			names[a.BehaviorFile] = name
		}
		actor := overlay.Actor{Name: a.Name.Value, Behavior: name}
		for _, o := range byActor {
			if o.Matches(actor) {
				r.Woven[a.Name.Value] = true
				break
			}
		}
	}
}
