// Package substrates is the seam between the standard and the systems that realize it: the
// Substrate interface and its optional runtime interfaces, found by type assertion (Layout,
// BoxDeclarer, Prober, Realizer, RunnerVerbs; the command line's Commands), the Output model
// every substrate compiles to, the header every generated file carries, the writer that installs
// an Output into a directory, and the drift check that compares one with what is on disk. One
// package per substrate sits below it (ghactions, local); the ordered registry of them is
// package substrates/registry, because it imports them and they import this package.
package substrates

import (
	"io/fs"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// Substrate is an implementation of the standard: a trigger executor and a runner over a box.
type Substrate interface {
	// Name is the target name profiles use (e.g. "gh-actions"); Aliases are its deprecated
	// spellings, accepted with a warning (a plain other name is a ShortNamer's).
	Name() string
	Aliases() []string
	// Support declares, feature by feature, how much of the standard this substrate realizes.
	// Compile warns from it for every feature a profile uses that is not fully supported.
	Support() []Support
	// Compile realizes a validated profile (ir.Check reported no errors), resolved once by the
	// caller (playbook.Resolve): what each behavior is comes from r, never from reading
	// playbooks again. Problems in the parts of the profile only this substrate reads (its
	// policy.box key) are returned as an ir.Diagnostics error, every one of them, positioned;
	// warnings go in Output.Warnings.
	Compile(r *resolved.Profile) (Output, error)
}

// Level is how far a substrate supports a feature.
type Level string

// The three support levels. Partial support is first-class, not failure.
const (
	Supported   Level = "supported"
	Partial     Level = "partial"
	Unsupported Level = "unsupported"
)

// Support is one entry of a substrate's support declaration.
type Support struct {
	// Feature names a catalog entry or a profile feature: "capability:code:propose",
	// "source:subject.ref", "trigger:cron", "field:timeout", "policy:maxConcurrent", ...
	Feature string `json:"feature"`
	Level   Level  `json:"level"`
	// Note says how the feature is realized, or what is missing and what to do instead.
	Note string `json:"note,omitempty"`
}

// HeaderStyle says how the DO NOT EDIT header is written into a generated file.
type HeaderStyle int

// The header styles.
const (
	// NoHeader marks a verbatim copy (a behavior, a resource): its bytes are the profile's, so
	// only the writer's ledger records that autonomy wrote it.
	NoHeader HeaderStyle = iota
	// HashHeader prepends "#" comment lines (YAML, shell).
	HashHeader
	// JSONHeader inserts a "//" member as the first member of the top-level JSON object; Data
	// must start with "{\n".
	JSONHeader
)

// File is one file of an Output.
type File struct {
	// Path is slash-separated and relative to the output directory, cleaned, never leaving it.
	Path string
	Data []byte
	// Mode is the file's permission bits: 0o644, or 0o755 for an executable.
	Mode   fs.FileMode
	Header HeaderStyle
	// sum is the sha256 of Data that Hashes recorded, lowercase hex, with the bytes it hashed
	// (sumOf, by their first byte and length): Stamp reuses it for the header when Data is still
	// those bytes, so a manifest's hash of a body and its header's cost one pass.
	sum    string
	sumOf  *byte
	sumLen int
	// room is the allocation Data ends, with HeaderRoom free bytes before Data (SetBody).
	room *headerRoom
}

// Output is what a substrate compiles a profile to.
type Output struct {
	// Target is the substrate's name.
	Target string
	// Files are sorted by Path, each path once.
	Files []File
	// Warnings are what the substrate cannot honor, positioned in the profile.
	Warnings ir.Diagnostics
	// Blockers make the output unfit to install though the profile is fine: the gh-actions
	// jobs could not install the autonomy compiling them. `compile` refuses to write such an
	// output (a dry run prints them as warnings); validate and check do not report them.
	Blockers ir.Diagnostics
	// Keep are paths of Files (slash-separated, relative to the output directory) whose file on
	// disk, when it exists with other content, is the user's to keep: Write leaves it and does
	// not record it as generated, and Check does not count it as drift. Compile fills it from
	// policy.box.autonomy.keep; `compile --keep` adds to it.
	Keep []string
}
