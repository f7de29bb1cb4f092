// Package playbook reads the four playbook formats of the seeds and validates them with the
// project's positioned diagnostics: capsule playbooks (seed 000, package capsule), AIP-12
// overlays (seed 001, package overlay), markdown step playbooks (seed 002, package steps) and
// workflow playbooks (seed 003, package workflow). Each sub-package has the same shape: Parse
// keeps the line and column of every element, Validate checks the format's rules, Check does
// both.
//
// This package detects a file's format (Detect) and validates files and directories of them
// (ValidatePaths), running the rules that span several files as well: the library-wide rules of
// capsule playbooks and the package rules of overlays, _index.md included.
//
// It also carries out AIP-12's evolve contract on a profile's overlay package (Evolver: Reflect,
// Promote, Archive; Trial on an installation's copy), measuring a promotion with the evaluation
// the profile declares (policy.box.evolve, Measure) and, when enabled, an LLM judge (AgentJudge).
package playbook
