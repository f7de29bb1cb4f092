package substrates

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/autonomyhq/autonomy/ir"
)

// MissingDocuments warns, positioned at the role, for every document documents.roles names that
// is neither a regular file in dir (the repository the fleet runs in) nor a file of out: the
// agents read the vision, constitution and roadmap from the repository, and the human-required
// paths gate them, so a missing one silently leaves the fleet without its charter. It only
// looks (lstat), never reads or follows a link.
func MissingDocuments(p *ir.Profile, dir string, out *Output) ir.Diagnostics {
	if p.Documents == nil {
		return nil
	}
	inOutput := make(map[string]bool, len(out.Files))
	for _, f := range out.Files {
		inOutput[f.Path] = true
	}
	var ds ir.Diagnostics
	for _, r := range p.Documents.Roles {
		rel := path.Clean(r.Path.Value)
		if r.Path.Value == "" || inOutput[rel] || !filepath.IsLocal(filepath.FromSlash(rel)) {
			continue // empty or outside: ir.Validate reports it
		}
		info, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
		var problem string
		switch {
		case err != nil:
			problem = "is not in " + dir
		case !info.Mode().IsRegular():
			problem = "in " + dir + " is not a regular file"
		default:
			continue
		}
		ds = append(ds, ir.Diagnostic{File: p.File, Pos: r.Path.Pos, Severity: ir.Warning,
			Message: fmt.Sprintf("documents.roles.%s %s %s: the agents read it as the fleet's %s", r.Name.Value, rel, problem, r.Name.Value),
			Hint:    "write it and commit it, or list it in resources: to install it with the fleet"})
	}
	return ds
}
