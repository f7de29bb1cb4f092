package ir

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// SkillsDir is the folder a bare behavior name is looked up in: behavior NAME is the skill folder
// skills/NAME holding SKILL.md, as in the reference implementation and real profiles.
const SkillsDir = "skills"

// SkillFile is the file a skill folder holds its instructions in.
const SkillFile = "SKILL.md"

// behaviorResult is what one behavior value resolved to, shared by every actor naming it.
type behaviorResult struct {
	file    string // the resolved file, relative to the profile directory
	skill   bool
	script  *ScriptRun
	problem string // an error, with hint
	hint    string
	// warning and warnHint are a problem that does not fail (a frontmatter name mismatch).
	warning, warnHint string
}

// resolveBehavior resolves a behavior value the one way every substrate and validate read it:
//   - a bare name (no /) is the skill folder skills/NAME holding SKILL.md, or a folder or script
//     of that name at the profile's root; both existing is ambiguous, an error naming both;
//   - a path is a skill folder holding SKILL.md, or a file (a script; for a person, the task spec).
//
// human says the actor is a person: its behavior is a task spec, never run, so any file will do.
func (v *validator) resolveBehavior(value string, human bool) behaviorResult {
	key := value
	if human {
		key = "\x00" + value
	}
	if res, ok := v.behaviors[key]; ok {
		return res
	}
	res := v.resolveBehaviorUncached(value, human)
	if v.behaviors == nil {
		v.behaviors = map[string]behaviorResult{}
	}
	v.behaviors[key] = res
	return res
}

func (v *validator) resolveBehaviorUncached(value string, human bool) behaviorResult {
	bare := !strings.ContainsAny(value, `/\`) && value != "." && value != ".."
	if !bare {
		return v.behaviorPath(value, human)
	}
	skillDir := SkillsDir + "/" + value
	skill := v.paths.check(skillDir + "/" + SkillFile)
	asSkill := skill.problem == "" && skill.info.Mode().IsRegular()
	root := v.paths.check(value)
	// The root reading counts only where it is a behavior itself: a file, or a folder holding
	// SKILL.md (a docs/ folder that shares a skill's name is not one).
	other := ""
	if root.problem == "" {
		switch {
		case root.info.Mode().IsRegular():
			other = "the file " + root.clean
		case root.info.IsDir():
			if r := v.paths.check(root.clean + "/" + SkillFile); r.problem == "" && r.info.Mode().IsRegular() {
				other = root.clean + "/" + SkillFile
			}
		}
	}
	switch {
	case asSkill && other != "":
		return behaviorResult{
			problem: fmt.Sprintf("is ambiguous: it names both %s and %s", skillDir+"/"+SkillFile, other),
			hint:    fmt.Sprintf("write behavior: %s for the first, or behavior: ./%s for the second, or rename one", skillDir, value),
		}
	case asSkill:
		if res, ok := v.skillCase(v.paths.check(skillDir).clean); ok {
			res.problem = "names the skill folder " + skillDir + ", but " + res.problem
			return res
		}
		res := behaviorResult{file: skillDir + "/" + SkillFile, skill: true}
		v.frontmatter(&res, value)
		return res
	case root.problem == "" && (other != "" || !root.info.IsDir()):
		return v.behaviorPath(value, human)
	}
	for _, r := range []pathResult{skill, root} {
		if r.problem != "" && !strings.HasPrefix(r.problem, "does not exist") {
			return behaviorResult{problem: r.problem, hint: r.hint}
		}
	}
	// skills/NAME is there, but not its SKILL.md: say what is missing (the folder's own name is
	// no suggestion).
	if dir := v.paths.check(skillDir); skill.problem == "" || dir.problem == "" && dir.info.IsDir() {
		if res, ok := v.skillCase(dir.clean); ok {
			res.problem = "names the skill folder " + skillDir + ", but " + res.problem
			return res
		}
		what, fix := "does not exist", "create"
		if skill.problem == "" {
			what, fix = "is not a regular file", "make a regular file of"
		}
		return behaviorResult{
			problem: fmt.Sprintf("names the skill folder %s, but %s/%s %s", skillDir, skillDir, SkillFile, what),
			hint:    fmt.Sprintf("a skill folder holds its instructions in %s: %s %s/%s", SkillFile, fix, skillDir, SkillFile),
		}
	}
	// Neither reading exists: say every place that was looked at.
	looked := []string{skillDir + "/" + SkillFile, value + "/" + SkillFile, value}
	hint := "create " + skillDir + "/" + SkillFile + ", or fix the name"
	if near := nearestEntry(filepath.Join(v.paths.root, SkillsDir), value); near != "" && v.paths.err == nil {
		hint = fmt.Sprintf("did you mean %q?", near)
	}
	return behaviorResult{problem: "does not exist: looked for " + strings.Join(looked, ", "), hint: hint}
}

// skillCase explains a skill folder (relative to the profile) without SKILL.md that holds it
// under another case (skill.md): the name is case-sensitive, even where the disk is not.
func (v *validator) skillCase(dir string) (behaviorResult, bool) {
	other := v.paths.caseVariant(dir, SkillFile)
	if other == "" {
		return behaviorResult{}, false
	}
	return behaviorResult{
		problem: fmt.Sprintf("%s exists: the file must be named %s", other, SkillFile),
		hint:    fmt.Sprintf("rename it to %s/%s", dir, SkillFile),
	}, true
}

// behaviorPath resolves a behavior written as a path: a skill folder or a file.
func (v *validator) behaviorPath(value string, human bool) behaviorResult {
	res := v.paths.check(value)
	if res.problem != "" {
		if res.problem == "does not exist" && !strings.HasSuffix(res.clean, "/"+SkillFile) && res.clean != SkillFile {
			return behaviorResult{problem: "does not exist: looked for " + res.clean + "/" + SkillFile + " and the file " + res.clean, hint: res.hint}
		}
		return behaviorResult{problem: res.problem, hint: res.hint}
	}
	switch {
	case res.info.IsDir():
		if res, ok := v.skillCase(res.clean); ok {
			res.problem = "is a folder, but " + res.problem
			return res
		}
		file := res.clean + "/" + SkillFile
		sres := v.paths.check(file)
		if sres.problem != "" || !sres.info.Mode().IsRegular() {
			problem := sres.problem
			if problem == "" {
				problem = "is not a regular file"
			}
			return behaviorResult{problem: fmt.Sprintf("is a folder, but %s %s", file, problem), hint: "a skill folder holds its instructions in " + SkillFile}
		}
		out := behaviorResult{file: file, skill: true}
		v.frontmatter(&out, path.Base(res.clean))
		return out
	case !res.info.Mode().IsRegular():
		return behaviorResult{problem: "is not a regular file", hint: "point it at a skill folder or a script file"}
	case path.Base(res.clean) == SkillFile:
		out := behaviorResult{file: res.clean, skill: true}
		if dir := path.Dir(res.clean); dir != "." {
			v.frontmatter(&out, path.Base(dir))
		}
		return out
	}
	out := behaviorResult{file: res.clean}
	if human {
		return out
	}
	if playbookExts[strings.ToLower(path.Ext(res.clean))] {
		// A playbook file (checked by the playbook package at its own lines): the agent is
		// handed it as its instructions, as it is a skill's SKILL.md, except a workflow
		// playbook, which a substrate that can runs itself (the local runner: ActorConfig.Workflow).
		out.skill = true
		return out
	}
	run, problem, hint := v.scriptRun(res.clean)
	if problem != "" {
		return behaviorResult{problem: problem, hint: hint}
	}
	out.script = run
	return out
}

// maxHead bounds what is read of a behavior file to find its shebang or frontmatter.
const maxHead = 64 << 10

// head reads the start of a file of the profile (already resolved inside it).
func (v *validator) head(rel string, n int64) ([]byte, error) {
	f, err := os.Open(filepath.Join(v.paths.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// scriptRun decides how a script runs: by its shebang, else by its extension.
func (v *validator) scriptRun(rel string) (*ScriptRun, string, string) {
	data, err := v.head(rel, 1024)
	if err != nil {
		return nil, "cannot be read: " + err.Error(), ""
	}
	if line, ok := shebangLine(data); ok {
		argv := ParseShebang(line)
		if len(argv) == 0 {
			return nil, "has an empty #! line", "name the interpreter, e.g. #!/bin/sh, or remove the line"
		}
		return &ScriptRun{Shebang: argv}, "", ""
	}
	ext := path.Ext(rel)
	if _, ok := scriptInterpreters[ext]; ok {
		return &ScriptRun{Ext: ext}, "", ""
	}
	return nil, "is neither a skill, a playbook nor a script it can run: it has no #! line and no known extension",
		"point it at a skill folder holding " + SkillFile + ", a playbook (.md, .yml, .yaml, .json), add a #! line, or use one of " + strings.Join(scriptExts, ", ")
}

// shebangLine returns the text after #! on a script's first line.
func shebangLine(data []byte) (string, bool) {
	if !bytes.HasPrefix(data, []byte("#!")) {
		return "", false
	}
	line := data[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	return strings.TrimRight(string(line), "\r"), true
}

// ParseShebang splits a #! line as the kernel does: the interpreter, then at most one argument
// (the rest of the line, trimmed).
func ParseShebang(line string) []string {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	interp, arg, _ := strings.Cut(line, " ")
	if i := strings.IndexByte(interp, '\t'); i >= 0 {
		interp, arg = interp[:i], interp[i+1:]+" "+arg
	}
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return []string{interp}
	}
	return []string{interp, arg}
}

// frontmatter checks that a SKILL.md naming itself in its frontmatter (name:) names its folder.
func (v *validator) frontmatter(res *behaviorResult, folder string) {
	data, err := v.head(res.file, maxHead)
	if err != nil {
		return
	}
	name, line, ok := frontmatterName(data)
	if !ok || name == folder {
		return
	}
	res.warning = fmt.Sprintf("%s (line %d) names the skill %q, but its folder is %q: agents that load skills by name will not find it", res.file, line, name, folder)
	res.warnHint = fmt.Sprintf("write name: %s in its frontmatter, or rename the folder to %s", folder, path.Join(path.Dir(path.Dir(res.file)), name))
}

// frontmatterName reads name: from a markdown file's YAML frontmatter (between --- lines at its
// start) and the line it is on.
func frontmatterName(data []byte) (string, int, bool) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !bytes.HasPrefix(data, []byte("---\n")) && !bytes.HasPrefix(data, []byte("---\r\n")) {
		return "", 0, false
	}
	body := data[bytes.IndexByte(data, '\n')+1:]
	end := -1
	for off := 0; off < len(body); {
		next := bytes.IndexByte(body[off:], '\n')
		line := body[off:]
		if next >= 0 {
			line = body[off : off+next]
		}
		if t := bytes.TrimRight(line, "\r"); bytes.Equal(t, []byte("---")) || bytes.Equal(t, []byte("...")) {
			end = off
			break
		}
		if next < 0 {
			break
		}
		off += next + 1
	}
	if end < 0 {
		return "", 0, false
	}
	var doc yaml.Node
	if yaml.Unmarshal(body[:end], &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", 0, false
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "name" && m.Content[i+1].Kind == yaml.ScalarNode {
			// +1 for the opening --- line.
			return m.Content[i+1].Value, m.Content[i+1].Line + 1, true
		}
	}
	return "", 0, false
}

func (v *validator) behavior(a *Actor) {
	b := a.Behavior
	if !b.Pos.IsSet() && !a.hollow && !a.typos["behavior"] {
		v.actorf(a, Error, a.Name.Pos, "e.g. behavior: "+sanitizeName(a.Name.Value)+", the skill skills/"+sanitizeName(a.Name.Value)+"/SKILL.md", "has no behavior")
		return
	}
	if b.Value == "" {
		return // absent from a hollow actor, or reported by the decoder
	}
	res := v.resolveBehavior(b.Value, a.IsHuman())
	if res.problem != "" {
		v.actorf(a, Error, b.Pos, res.hint, "behavior %q %s", b.Value, res.problem)
		return
	}
	if res.warning != "" {
		v.actorf(a, Warning, b.Pos, res.warnHint, "behavior %q: %s", b.Value, res.warning)
	}
	a.Skill, a.BehaviorFile, a.Script = res.skill, res.file, res.script
}
