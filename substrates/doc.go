// Package substrates will hold the Substrate interface, the ordered registry of substrates and the
// shared compile Output model and writer; one package per substrate (gh-actions, local) below it.
// Compiling is the next stage of the pipeline (see DESIGN.md): today the registry's target names
// live in ir.Targets, which the registry must match.
package substrates
