// Package fakesubstrate is a test-only substrate, fake: the proof that adding a substrate is one
// package plus one registry line. It is never in the registry's list; a test registers it
// (registry.Register) and finds it in validate, compile, catalog, schema and conformance like
// the real ones, through the same optional interfaces (substrates.BoxDeclarer, Prober,
// Realizer). Its compile writes one JSON file per actor; its runner keeps sessions in memory.
package fakesubstrate

import (
	"encoding/json"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
)

// Name is the target name profiles write.
const Name = "fake"

// Substrate is the fake substrate.
type Substrate struct{}

// Name is "fake".
func (Substrate) Name() string { return Name }

// Aliases are none.
func (Substrate) Aliases() []string { return nil }

// supported are the features fake realizes (Realized reads them back); every other catalog entry
// is declared unsupported, so compile warns where a profile uses it.
var supported = []string{"trigger:dispatch", "field:timeout"}

// Support declares every catalog entry and feature of the standard.
func (Substrate) Support() []substrates.Support {
	features := []string{"capability:@scope"}
	for _, c := range ir.Capabilities {
		features = append(features, "capability:"+c.Name)
	}
	features = append(features, "trigger:cron", "trigger:dispatch", "trigger:event")
	for _, s := range ir.Sources {
		features = append(features, "source:"+s.Name)
	}
	features = append(features, "kind:human", "field:timeout", "field:review", "field:result",
		"field:execution", "field:prelaunch", "policy:maxConcurrent")
	out := make([]substrates.Support, 0, len(features))
	for _, f := range features {
		if slices.Contains(supported, f) {
			out = append(out, substrates.Support{Feature: f, Level: substrates.Supported, Note: "in .fake/ACTOR.json"})
		} else {
			out = append(out, substrates.Support{Feature: f, Level: substrates.Unsupported, Note: "the fake substrate realizes only " + fmt.Sprint(supported)})
		}
	}
	return out
}

// BoxSchema is the schema of policy.box.fake: one string, zone.
func (Substrate) BoxSchema() map[string]any {
	return map[string]any{
		"type":                 []string{"object", "null"},
		"additionalProperties": false,
		"properties":           map[string]any{"zone": map[string]any{"type": "string"}},
	}
}

// actorFile is what compile writes for an actor, at .fake/ACTOR.json.
type actorFile struct {
	Actor    string `json:"actor"`
	Dispatch bool   `json:"dispatch"`
	Timeout  int    `json:"timeout,omitempty"`
	Zone     string `json:"zone,omitempty"`
}

// Compile writes .fake/ACTOR.json for every actor, carrying policy.box.fake.zone; a zone that
// is not a string, or a key of policy.box.fake other than zone, is an error.
func (Substrate) Compile(r *resolved.Profile) (substrates.Output, error) {
	p := r.Profile
	zone, diags := readBox(p)
	if diags.HasErrors() {
		return substrates.Output{}, diags
	}
	out := substrates.Output{Target: Name, Warnings: diags}
	for _, a := range p.Actors {
		f := actorFile{Actor: a.Name.Value, Timeout: a.Timeout.Value, Zone: zone}
		for _, t := range a.Triggers {
			f.Dispatch = f.Dispatch || t.Dispatch.Value == "true"
		}
		data, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return substrates.Output{}, err
		}
		out.Files = append(out.Files, substrates.File{Path: ".fake/" + f.Actor + ".json", Data: append(data, '\n'), Mode: 0o644, Header: substrates.JSONHeader})
	}
	slices.SortFunc(out.Files, func(a, b substrates.File) int { return compare(a.Path, b.Path) })
	return out, nil
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readBox reads policy.box.fake.
func readBox(p *ir.Profile) (string, ir.Diagnostics) {
	r := &substrates.BoxReader{File: p.File, Prefix: "policy.box.fake."}
	zone := ""
	if n := substrates.BoxNode(p, Name); n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value != "zone" {
				r.Errorf(k, "the only key is zone", "unknown key %q", k.Value)
				continue
			}
			zone, _ = r.Str(v, "zone", "e.g. zone: eu")
		}
	}
	return zone, r.Diags
}

// Realized reads the probe's .fake/probe.json back (substrates.Realizer).
func (Substrate) Realized(feature string, out substrates.Output) error {
	data, err := out.File(".fake/probe.json")
	if err != nil {
		return err
	}
	var f actorFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("probe.json: %v", err)
	}
	switch feature {
	case "trigger:dispatch":
		if !f.Dispatch {
			return fmt.Errorf("probe.json does not say it is dispatched")
		}
		return nil
	case "field:timeout":
		if f.Timeout != 7 {
			return fmt.Errorf("probe.json has timeout %d, not 7", f.Timeout)
		}
		return nil
	}
	return fmt.Errorf("no realization check for %s on fake", feature)
}
