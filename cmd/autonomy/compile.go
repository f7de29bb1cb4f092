package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/gcfloor"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

func newCompile() *cobra.Command {
	var target, dir, format string
	var force, dryRun, strict, verbose, watchFlag bool
	var keep []string
	cmd := &cobra.Command{
		Use:   "compile PROFILE [--target T] [--dir DIR]",
		Short: "Compile a profile onto a substrate and install the result in a directory",
		Long: `compile validates the profile, compiles it for one target and installs the output in DIR
(--dir, default: the current directory, normally the root of the repository the fleet runs in;
--out is its older name). For gh-actions, a DIR inside a git repository other than its root
draws a warning naming the root: GitHub runs only the root's .github/workflows.

The install is all or nothing: every file is staged first, then moved into place. A file whose
bytes are unchanged is not rewritten. Files compile generated before that the profile no longer
produces are deleted; a file autonomy did not generate is never touched. A generated file edited
by hand is not overwritten unless --force is given. What autonomy generated, per target, is
recorded in DIR/.autonomy/generated/<target>.json.

A file the profile installs that already exists in DIR with other content (your repository's own
.gitignore, say) is refused unless you keep yours: --keep PATH (repeatable), or list it in the
profile's policy.box.autonomy.keep so that compile and check agree. A kept file is left as it is,
reported as "kept", and not recorded as generated. A document documents.roles names that is not
in DIR draws a warning.

--target may be omitted when the profile declares exactly one target. A target the profile does
not declare is compiled with a warning.

--strict makes warnings fail: a profile or compile with any warning installs nothing and exits 1.

--watch compiles, then compiles again each time a file of the profile's directory changes (it
looks every 0.3 s), printing each result; a compile that fails is printed and the watch goes on.
Ctrl-C (SIGINT) or SIGTERM ends it, with exit 0.

--format json prints {"target", "dir", "dryRun", "plan": [{"path", "op"}], "conflicts":
[{"path", "problem", "hint"}], "warnings": [...], "failure"} once compile gets to the install
(op: create, update, delete, unchanged, kept); a profile with errors prints its diagnostics on
stderr, as in text.

A gh-actions install is refused (exit 1, nothing written) when its trusted jobs could not
install this autonomy: a build from a working tree with uncommitted changes, or one with no VCS
stamp (go run without -buildvcs=true). --dry-run prints that as a warning.

Exit codes: 0 installed (or nothing to change), 1 the profile has errors (or warnings, with
--strict) or the install would overwrite a file autonomy must not touch, 2 usage or I/O error.`,
		Example: `  autonomy compile profiles/sdlc --target gh-actions --dir .
  autonomy compile profiles/hello --target local --dry-run
  autonomy compile profiles/sdlc --target gh-actions --dir ../my-repo --force
  autonomy compile profiles/hello --target local --strict --dry-run
  autonomy compile profiles/sdlc --target gh-actions --dir ../my-repo --keep .gitignore
  autonomy compile profiles/hello --target local --dry-run --format json
  autonomy compile profiles/hello --target local --dir . --watch`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			o := compileOpts{profile: args[0], target: target, dir: dir, format: format, force: force, dryRun: dryRun, strict: strict, verbose: verbose, keep: keep}
			if watchFlag {
				return watchCompile(cmd, o)
			}
			gcfloor.OneShot()
			return compileOnce(cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	targetFlag(cmd.Flags(), &target, "", "the substrate to compile for ("+strings.Join(registry.Names(), ", ")+"); optional when the profile declares one target")
	dirFlag(cmd.Flags(), &dir, "out", ".", "the directory to install into")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite generated files that were edited by hand")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would change and write nothing")
	cmd.Flags().BoolVar(&strict, "strict", false, strictUsage)
	cmd.Flags().BoolVar(&verbose, "verbose", false, verboseUsage)
	keepFlag(cmd.Flags(), &keep)
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, or json (the plan, conflicts and warnings on stdout)")
	cmd.Flags().BoolVar(&watchFlag, "watch", false, "compile again each time a file of the profile changes, until interrupted (Ctrl-C)")
	return cmd
}

// compileOpts are compile's flags.
type compileOpts struct {
	profile, target, dir, format   string
	force, dryRun, strict, verbose bool
	keep                           []string
}

// compileOnce validates, compiles and installs once, printing as compile does.
func compileOnce(out, errOut io.Writer, o compileOpts) error {
	p, sub, warnings, err := loadFor(o.profile, o.target, "compiled", errOut, o.verbose)
	if err != nil {
		return err
	}
	output, err := compileTo(sub, p, o.dir, errOut, o.verbose)
	if err != nil {
		return err
	}
	if err := applyKeep(&output, o.keep); err != nil {
		return err
	}
	docs := append(substrates.MissingDocuments(p.Profile, o.dir, &output), substrates.Placement(sub, p.Profile, o.dir)...)
	docs = append(docs, substrates.Rivals(sub, o.dir, &output)...)
	fmt.Fprint(errOut, docs.String())
	if err := strictly(o.strict, len(warnings)+len(output.Warnings)+len(docs), p.File, "compiled"); err != nil {
		return err
	}
	if err := blocked(output, o.dryRun, errOut); err != nil {
		return err
	}
	rep := &compileReport{Target: sub.Name(), Dir: o.dir, DryRun: o.dryRun, format: o.format,
		Warnings: append(append(append(ir.Diagnostics{}, warnings...), output.Warnings...), docs...)}
	if _, err := os.Stat(o.dir); errors.Is(err, fs.ErrNotExist) {
		if o.dryRun {
			// The directory would be created empty: every file is new.
			plan := make(substrates.Plan, len(output.Files))
			for i, f := range output.Files {
				plan[i] = substrates.Change{Path: f.Path, Op: substrates.Create}
			}
			return rep.emit(out, errOut, plan)
		}
		// Like go build -o: the installation directory is created when missing.
		if err := os.MkdirAll(o.dir, 0o755); err != nil {
			return usageError("%v", err)
		}
	}
	waiting := func() {
		fmt.Fprintf(errOut, "autonomy: %s is held by another compile installing into it, or by an agent session working in the installation root; waiting for it (up to %s)\n", o.dir, substrates.DefaultLockWait)
	}
	plan, err := substrates.Write(o.dir, &output, substrates.WriteOptions{Force: o.force, DryRun: o.dryRun, Waiting: waiting})
	var conflicts *substrates.ConflictError
	switch {
	case errors.As(err, &conflicts):
		return rep.refused(out, errOut, conflicts)
	case err != nil:
		return usageError("%v", err)
	}
	return rep.emit(out, errOut, plan)
}

// blocked prints what makes the output unfit to install (the gh-actions jobs could not install
// the autonomy compiling them): as warnings on a dry run, else as errors, writing nothing.
func blocked(output substrates.Output, dryRun bool, errOut io.Writer) error {
	if len(output.Blockers) == 0 {
		return nil
	}
	if !dryRun {
		fmt.Fprint(errOut, output.Blockers.String())
		return &exitError{Code: exitProblems, Msg: fmt.Sprintf("%s for %s; nothing was written", count(len(output.Blockers), "error"), output.Target)}
	}
	for _, d := range output.Blockers {
		d.Severity = ir.Warning
		fmt.Fprintln(errOut, d.String())
	}
	return nil
}

// strictUsage is the help of --strict, the same on validate, compile and check.
const strictUsage = "fail (exit 1) on any warning, as on an error"

// strictly is the --strict verdict once warnings were printed: nil unless strict and there was
// at least one. done, when not "", is the verb of the closing message ("nothing was compiled").
func strictly(strict bool, warnings int, file, done string) error {
	if !strict || warnings == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s has %s and --strict makes warnings fail", file, count(warnings, "warning"))
	if done != "" {
		msg += "; nothing was " + done
	}
	return &exitError{Code: exitProblems, Msg: msg}
}

// loadForTarget loads and validates the profile (printing its diagnostics) and picks the
// substrate: the one named, or the profile's only target. done is the verb of the closing
// message when the profile has errors ("nothing was compiled"). warnings are the warnings
// printed, for --strict and --format json.
func loadForTarget(path, target, done string, errOut io.Writer) (p *resolved.Profile, sub substrates.Substrate, warnings ir.Diagnostics, err error) {
	return loadFor(path, target, done, errOut, false)
}

// loadFor is loadForTarget printing every warning when verbose, else one line per cause.
func loadFor(path, target, done string, errOut io.Writer, verbose bool) (p *resolved.Profile, sub substrates.Substrate, warnings ir.Diagnostics, err error) {
	p, diags, err := checkProfile(path)
	if err != nil {
		return nil, nil, nil, usageError("%v", err)
	}
	diags = append(diags, reservedPaths(p, target)...).Sort()
	printDiags(errOut, diags, verbose)
	// A file that does not load at all (a YAML syntax error, an empty file) has no profile: the
	// diagnostics name the file.
	if p == nil || diags.HasErrors() {
		file := path
		switch {
		case p != nil:
			file = p.File
		case len(diags) > 0:
			file = diags[0].File
		}
		n := diags.Errors()
		if n == 0 {
			n = 1 // a profile that did not load is an error even if no diagnostic says so
		}
		return nil, nil, nil, &exitError{Code: exitProblems, Msg: fmt.Sprintf("%s has %s; nothing was %s", file, count(n, "error"), done)}
	}
	var declared []string
	for _, t := range p.Targets {
		name := t.Value
		if canon, ok := ir.TargetShort(name); ok {
			name = canon
		} else if canon, ok := ir.TargetAlias(name); ok {
			name = canon
		}
		declared = append(declared, name)
	}
	if target == "" {
		switch len(declared) {
		case 0:
			return nil, nil, nil, usageError("%s declares no targets: pass --target (available: %s)", p.File, strings.Join(registry.Names(), ", "))
		case 1:
			target = declared[0]
		default:
			return nil, nil, nil, usageError("%s declares %d targets (%s): pass --target to choose one", p.File, len(declared), strings.Join(declared, ", "))
		}
	}
	sub, ok := registry.Lookup(target)
	if !ok {
		return nil, nil, nil, usageError("unknown target %q (%s)", target, ir.Suggest(target, registry.Names()))
	}
	warnings = diags
	if slices.Contains(sub.Aliases(), target) {
		msg := fmt.Sprintf("target %q is a deprecated alias; write %q", target, sub.Name())
		warnings = append(warnings, ir.Diagnostic{Severity: ir.Warning, Message: msg})
		fmt.Fprintf(errOut, "autonomy: warning: %s\n", msg)
	}
	if !contains(declared, sub.Name()) {
		msg := fmt.Sprintf("the profile does not declare target %q (it declares: %s); compiling anyway", sub.Name(), strings.Join(declared, ", "))
		d := ir.Diagnostic{File: p.File, Pos: p.TargetsPos, Severity: ir.Warning, Message: msg}
		warnings = append(warnings, d)
		fmt.Fprintln(errOut, d.String())
	}
	return p, sub, warnings, nil
}

// compileTo compiles for dir (the header names the profile relative to it), printing warnings.
func compileTo(sub substrates.Substrate, p *resolved.Profile, dir string, errOut io.Writer, verbose bool) (substrates.Output, error) {
	output, err := substrates.Compile(sub, p, dir)
	var diags ir.Diagnostics
	switch {
	case errors.As(err, &diags):
		fmt.Fprint(errOut, diags.String())
		return output, &exitError{Code: exitProblems, Msg: fmt.Sprintf("%s: %s for %s; nothing was compiled", p.File, count(diags.Errors(), "error"), sub.Name())}
	case err != nil:
		return output, usageError("%v", err)
	}
	printDiags(errOut, output.Warnings, verbose)
	return output, nil
}

// verboseUsage is the help of --verbose, the same on validate, compile and check.
const verboseUsage = "print every warning; without it a warning repeated for many actors is printed once, naming the first and counting the rest"

// printDiags prints diagnostics one a line: every one when verbose, else a warning repeated
// across actors once (ir.Diagnostics.Condense), so a fleet of thousands stays readable. It
// reports whether it left some out.
func printDiags(w io.Writer, ds ir.Diagnostics, verbose bool) (condensed bool) {
	shown := ds
	if !verbose {
		shown = ds.Condense()
	}
	_, _ = io.WriteString(w, shown.String())
	return len(shown) < len(ds)
}

// printPlan lists every change on stdout and a summary on stderr. The list is buffered: one
// write for thousands of files, not one each.
func printPlan(stdout, errOut io.Writer, plan substrates.Plan, target, dir string, dryRun bool) {
	out := bufio.NewWriterSize(stdout, 64<<10)
	counts := map[substrates.Op]int{}
	for _, c := range plan {
		counts[c.Op]++
		verb, tail := c.Op.String(), ""
		switch {
		case c.Op == substrates.Keep:
			continue
		case c.Op == substrates.Kept && dryRun:
			verb, tail = "keep", " (yours, left as it is)"
		case c.Op == substrates.Kept:
			tail = " (yours, left as it is)"
		}
		if dryRun {
			verb = "would " + verb
		}
		fmt.Fprintf(out, "%s %s%s\n", verb, filepath.ToSlash(filepath.Join(dir, c.Path)), tail)
	}
	_ = out.Flush() // before the summary on stderr; a closed stdout is not the install's failure
	prefix, kept := "", ""
	if dryRun {
		prefix = "dry run, nothing written: "
	}
	if n := counts[substrates.Kept]; n > 0 {
		kept = fmt.Sprintf(", %d kept", n)
	}
	fmt.Fprintf(errOut, "%s%s: %d created, %d updated, %d deleted, %d unchanged%s in %s\n", prefix, target,
		counts[substrates.Create], counts[substrates.Update], counts[substrates.Delete], counts[substrates.Keep], kept, dir)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
