package ghactions

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/provision"
)

// maxRivalRead bounds what Rivals reads of one workflow file.
const maxRivalRead = 1 << 20

// Rivals finds the workflows of dir's .github/workflows that autonomy did not generate and that
// name a status context its gate requires (agent-review, human-approval): GitHub takes a
// required status from whichever workflow posts it, so another writer of it can pass a head
// autonomy's review refused, or one it holds for a maintainer. Symbolic links and files over
// 1 MiB are not read.
func (Substrate) Rivals(dir string, out *substrates.Output) ir.Diagnostics {
	wf := filepath.Join(dir, ".github", "workflows")
	entries, err := os.ReadDir(wf)
	if err != nil {
		return nil
	}
	ours := map[string]bool{}
	for _, f := range out.Files {
		ours[f.Path] = true
	}
	var diags ir.Diagnostics
	for _, e := range entries {
		name := e.Name()
		rel := path.Join(".github/workflows", name)
		if ext := path.Ext(name); (ext != ".yml" && ext != ".yaml") || ours[rel] {
			continue
		}
		unread := func(why string) {
			diags = append(diags, ir.Diagnostic{File: filepath.Join(dir, filepath.FromSlash(rel)), Pos: ir.Pos{Line: 1, Col: 1}, Severity: ir.Warning,
				Message: "this workflow is not autonomy's and was not read for a status its gate requires: " + why,
				Hint:    "make sure it posts neither human-approval nor agent-review"})
		}
		if !e.Type().IsRegular() {
			unread("it is not a regular file")
			continue
		}
		data, err := bounded.ReadFile(filepath.Join(wf, name), maxRivalRead)
		if err != nil {
			unread(err.Error())
			continue
		}
		for _, status := range []string{provision.HumanApprovalContext, provision.StatusContext} {
			line, col, ok := statusNamed(data, status)
			if !ok {
				continue
			}
			diags = append(diags, ir.Diagnostic{File: filepath.Join(dir, filepath.FromSlash(rel)), Pos: ir.Pos{Line: line, Col: col}, Severity: ir.Warning,
				Message: fmt.Sprintf("this workflow is not autonomy's and names the status %q, which autonomy's %s posts: GitHub takes the status from either, so this one can pass a change autonomy holds", status, gateOf(status)),
				Hint:    "remove it if it is a migrated fleet's own gate, since autonomy's jobs post the status, or make it post a status of another name"})
			break
		}
	}
	slices.SortFunc(diags, func(a, b ir.Diagnostic) int { return strings.Compare(a.File, b.File) })
	return diags
}

// gateOf names the job of autonomy's that posts status.
func gateOf(status string) string {
	if status == provision.HumanApprovalContext {
		return "human gate (the engage and review jobs)"
	}
	return "review job"
}

// statusNamed finds status in data as a word of its own (not inside a longer name), returning its
// 1-based line and column.
func statusNamed(data []byte, status string) (line, col int, ok bool) {
	word := func(b byte) bool {
		return b == '-' || b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	for from := 0; ; {
		i := bytes.Index(data[from:], []byte(status))
		if i < 0 {
			return 0, 0, false
		}
		i += from
		end := i + len(status)
		if (i == 0 || !word(data[i-1])) && (end == len(data) || !word(data[end])) {
			line = bytes.Count(data[:i], []byte("\n")) + 1
			col = i - (bytes.LastIndexByte(data[:i], '\n') + 1) + 1
			return line, col, true
		}
		from = end
	}
}
