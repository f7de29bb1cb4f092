package ir

import (
	"encoding/json"
	"sort"
	"strings"
)

// SchemaID is the $id of the profile JSON Schema.
const SchemaID = "https://autonomy.dev/schemas/autonomy.ir.v1.json"

type obj = map[string]any

// JSONSchema returns a JSON Schema (draft-07, the draft editors support best) of the profile format,
// generated from the catalogs so it never drifts from what Validate accepts. Editors use it through
// yaml-language-server; it cannot express every rule (paths, the merge boundary, reviewers), so
// Validate stays the authority.
func JSONSchema() []byte {
	capNames, capDocs := []string{}, []string{}
	for _, c := range Capabilities {
		if c.Grantable {
			capNames = append(capNames, c.Name)
			capDocs = append(capDocs, c.Description)
		}
	}
	capPattern := "^(" + strings.ReplaceAll(strings.Join(capNames, "|"), ".", `\.`) + ")(@[A-Za-z0-9_.*/-]+)?$"
	stateKeys := StateNames()
	for alias := range StateAliases {
		stateKeys = append(stateKeys, alias)
	}
	sort.Strings(stateKeys)
	fieldDoc := map[string]string{}
	for _, f := range Fields {
		fieldDoc[f.Name] = f.Description
	}
	sourceDocs := make([]string, len(Sources))
	for i, s := range Sources {
		sourceDocs[i] = s.Description
	}
	str := obj{"type": "string", "minLength": 1}
	path := obj{"type": "string", "minLength": 1, "pattern": `^[^/\\]`, "description": "a path relative to the profile directory"}
	params := obj{
		"type":          "object",
		"description":   "params forwarded to the actor: { ENV_NAME: source }",
		"propertyNames": obj{"pattern": paramNameRe().String()},
		"additionalProperties": obj{
			"enum": SourceNames(), "enumDescriptions": sourceDocs, "markdownEnumDescriptions": sourceDocs,
		},
	}
	trigger := func(key string, value obj, extra obj) obj {
		props := obj{key: value, "params": params}
		for k, v := range extra {
			props[k] = v
		}
		return obj{"type": "object", "required": []string{key}, "additionalProperties": false, "properties": props}
	}
	actor := obj{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"behavior", "triggers"},
		"properties": obj{
			"behavior": withDoc(path, fieldDoc["behavior"]),
			"kind":     obj{"enum": Kinds, "default": Kinds[0], "description": fieldDoc["kind"]},
			"capabilities": obj{"type": []string{"array", "null"}, "description": fieldDoc["capabilities"], "items": obj{
				"anyOf": []any{
					obj{"enum": capNames, "enumDescriptions": capDocs, "markdownEnumDescriptions": capDocs},
					obj{"type": "string", "pattern": capPattern},
				},
			}},
			"triggers": obj{"type": "array", "minItems": 1, "description": fieldDoc["triggers"], "items": obj{"oneOf": []any{
				trigger("cron", obj{"type": "string", "description": "a 5-field cron expression: minute hour day-of-month month day-of-week"}, nil),
				trigger("event", withDoc(str, "a substrate-native event name, e.g. issue_comment"), obj{"config": obj{"type": "object", "description": "the event's configuration, carried verbatim"}}),
				trigger("dispatch", obj{"const": true, "description": "launched on demand through the runner"}, nil),
			}}},
			"timeout": obj{"type": "integer", "minimum": 1, "maximum": MaxTimeout, "description": fieldDoc["timeout"]},
			"review":  withDoc(str, fieldDoc["review"]),
			"result": obj{"type": "object", "additionalProperties": false, "required": []string{"schema"}, "description": fieldDoc["result"], "properties": obj{
				"schema": obj{"anyOf": []any{obj{"enum": append(ContractNames(), NoResult)}, obj{"type": "object"}}},
			}},
			"execution": obj{"type": "object", "additionalProperties": false, "required": []string{"workspace"}, "description": fieldDoc["execution"], "properties": obj{
				"workspace": obj{"enum": Workspaces},
			}},
			"prelaunch": withDoc(str, fieldDoc["prelaunch"]),
		},
		// A person is engaged on demand: dispatch triggers only, and nothing to execute.
		"if":   obj{"required": []string{"kind"}, "properties": obj{"kind": obj{"const": "human"}}},
		"then": obj{"not": obj{"anyOf": []any{obj{"required": []string{"execution"}}, obj{"required": []string{"prelaunch"}}}}, "properties": obj{"triggers": obj{"items": obj{"required": []string{"dispatch"}}}}},
	}
	actors := obj{
		"type":                 "object",
		"minProperties":        1,
		"propertyNames":        obj{"pattern": actorNameRe().String(), "maxLength": MaxActorName},
		"additionalProperties": obj{"$ref": "#/definitions/actor"},
	}
	targets := targetSpellings()
	taskStates := obj{"type": []string{"object", "null"}, "propertyNames": obj{"enum": stateKeys}, "additionalProperties": obj{"type": []string{"string", "null"}}}
	section := obj{"type": []string{"object", "null"}}
	positive := obj{"type": []string{"integer", "null"}, "minimum": 1}
	schema := obj{
		"$schema":              "http://json-schema.org/draft-07/schema#",
		"$id":                  SchemaID,
		"title":                "autonomy.ir.v1 profile",
		"description":          "A team of AI agents and humans: who they are, what authority each holds, when each fires and what each is told.",
		"type":                 "object",
		"additionalProperties": false,
		"patternProperties":    obj{"^x-": obj{"description": "an extension key, free-form: a home for YAML anchors"}},
		"required":             []string{"schema", "targets"},
		"oneOf":                []any{obj{"required": []string{"actors"}}, obj{"required": []string{"agents"}}},
		"properties": obj{
			"schema":    obj{"const": Schema},
			"targets":   obj{"type": "array", "minItems": 1, "items": obj{"enum": targets}, "description": targetsDescription()},
			"codeHost":  obj{"enum": CodeHosts, "default": CodeHosts[0]},
			"actors":    obj{"$ref": "#/definitions/actors"},
			"agents":    obj{"$ref": "#/definitions/actors", "description": "the older name of actors"},
			"resources": obj{"type": []string{"array", "null"}, "items": path, "description": "files carried verbatim"},
			"policy": obj{"type": "object", "additionalProperties": false, "properties": obj{
				"maxConcurrent": obj{"type": "integer", "minimum": 1, "maximum": MaxConcurrentLimit},
				"box": obj{"type": "object", "description": "governance data, carried verbatim except the keys substrates own", "properties": boxSchema(obj{
					"taskStates": taskStates,
					"tracker":    section,
					"human": obj{"type": []string{"object", "null"}, "properties": obj{
						"maintainers_var": obj{"type": []string{"string", "null"}, "pattern": varNameRe().String()},
						"sla_minutes":     positive,
					}},
					"autonomy": obj{"type": []string{"object", "null"}, "properties": obj{
						"max_open_agent_prs":   positive,
						"max_develop_attempts": positive,
						"keep":                 obj{"type": []string{"array", "null"}, "items": obj{"type": "string", "minLength": 1, "pattern": `^[^/\\]`}, "description": "files of the repository compile keeps when they exist with other content"},
					}},
					"mcp": mcpSchema(positive),
					"web": obj{"type": []string{"object", "null"}, "additionalProperties": false, "description": "the hosts workflow playbooks' web steps may fetch from (none: no web step runs)", "properties": obj{
						"allow": obj{"type": []string{"array", "null"}, "minItems": 1, "items": obj{"type": "string", "pattern": hostRe().String()}},
					}},
					"cli": obj{"type": []string{"object", "null"}, "additionalProperties": false, "description": "the programs workflow playbooks' cli steps may run (allow: only these) and never run (deny)", "properties": obj{
						"allow": obj{"type": []string{"array", "null"}, "minItems": 1, "items": obj{"type": "string", "pattern": programRe().String()}},
						"deny":  obj{"type": []string{"array", "null"}, "items": obj{"type": "string", "pattern": programRe().String()}},
					}},
				})},
			}},
			"documents": obj{"type": "object", "additionalProperties": false, "properties": obj{
				"roles": obj{"type": "object", "additionalProperties": false, "required": []string{"vision"}, "properties": obj{
					"vision": str, "constitution": str, "roadmap": str,
				}},
			}},
		},
		"definitions": obj{"actors": actors, "actor": actor},
	}
	out, err := json.MarshalIndent(schema, "", "  ")
	if err != nil {
		panic(err) // the schema is built from static values; a failure is a bug
	}
	return append(out, '\n')
}

func withDoc(base obj, doc string) obj {
	out := obj{"description": doc}
	for k, v := range base {
		out[k] = v
	}
	return out
}

// targetsDescription describes targets:, naming each registered alias.
func targetsDescription() string {
	var aliases []string
	for _, t := range RegisteredTargets() {
		for _, a := range t.Short {
			aliases = append(aliases, a+" is another name of "+t.Name)
		}
		for _, a := range t.Aliases {
			aliases = append(aliases, a+" is a deprecated alias of "+t.Name)
		}
	}
	if len(aliases) == 0 {
		return "the substrates this profile compiles to"
	}
	return "the substrates this profile compiles to (" + strings.Join(aliases, "; ") + ")"
}

// boxSchema adds to shared, the schema of the policy.box keys every profile may use, the
// section each registered target owns: its Box schema (any mapping when it declares none) under
// its name and each short name, and under each alias a mapping described as the deprecated name of its section.
func boxSchema(shared obj) obj {
	for _, t := range RegisteredTargets() {
		section := obj{"type": []string{"object", "null"}}
		if t.Box != nil {
			section = t.Box
		}
		shared[t.Name] = section
		for _, a := range t.Short {
			shared[a] = section
		}
		for _, a := range t.Aliases {
			shared[a] = obj{"type": []string{"object", "null"}, "description": "the deprecated name of " + t.Name}
		}
	}
	return shared
}
