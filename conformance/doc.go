// Package conformance proves substrates. The battery (Checks, Run) probes runners for real
// through the ir.Runner contract, each check on a fresh installation of the probe fleet
// (conformance/probe): core checks every runner must pass, expanded ones it may support. The
// support matrix (Matrix) is every catalog entry × every substrate, read from each substrate's own
// declaration and verified by compiling a probe profile per feature (Realized). `autonomy
// conformance` reports both; docs/conformance.md is its Markdown output.
package conformance
