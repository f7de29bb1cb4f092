package ir

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/jsonschema"
	"github.com/autonomyhq/autonomy/internal/strictjson"
)

// CompileResultSchema compiles an actor's result contract, named or inline, into a validator of
// result files. A result schema is self-contained: compiling one never reads a file or the
// network.
func CompileResultSchema(r *Result) (*jsonschema.Schema, error) {
	if r.Inline != nil {
		return jsonschema.Compile(r.Inline)
	}
	src, ok := ResultContracts[r.Named.Value]
	if !ok {
		return nil, fmt.Errorf("unknown result contract %q", r.Named.Value)
	}
	doc, err := jsonschema.Decode([]byte(src))
	if err != nil {
		return nil, err
	}
	return jsonschema.Compile(doc)
}

// refKeywords are the JSON Schema keywords that refer to another schema.
var refKeywords = []string{"$ref", "$dynamicRef", "$recursiveRef"}

// externalRefs reports every reference of an inline schema that leaves it; it returns false if any.
func (v *validator) externalRefs(a *Actor, n *yaml.Node) bool {
	ok := true
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Value == "$schema" && val.Kind == yaml.ScalarNode && !strings.HasPrefix(val.Value, "https://json-schema.org/") && !strings.HasPrefix(val.Value, "http://json-schema.org/") {
				v.actorf(a, Error, pos(val), "name a JSON Schema draft, e.g. https://json-schema.org/draft/2020-12/schema, or remove $schema", "result.schema $schema %q is not a JSON Schema draft", val.Value)
				ok = false
				continue
			}
			if contains(refKeywords, k.Value) && val.Kind == yaml.ScalarNode && !strings.HasPrefix(val.Value, "#") {
				v.actorf(a, Error, pos(val), "refer only inside it, e.g. $ref: \"#/$defs/verdict\"", "result.schema %s %q leaves the inline schema", k.Value, val.Value)
				ok = false
				continue
			}
			ok = v.externalRefs(a, val) && ok
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			ok = v.externalRefs(a, c) && ok
		}
	}
	return ok
}

// checkInlineSchema reports each reason an inline JSON Schema is invalid, at the offending key.
func (v *validator) checkInlineSchema(a *Actor, res *Result) {
	if !v.externalRefs(a, res.inline) {
		return
	}
	_, err := CompileResultSchema(res)
	if err == nil {
		return
	}
	what := fmt.Sprintf("actor %q: result.schema", a.Name.Value)
	var se *jsonschema.SchemaError
	if errors.As(err, &se) {
		for _, e := range se.Errors {
			at := nodeAt(res.inline, e.InstanceLocation)
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			v.r.errorf(pos(at), "see https://json-schema.org/understanding-json-schema", "%s is not a valid JSON Schema: at %s: %s", what, loc, e.Message)
		}
		return
	}
	v.r.errorf(res.InlinePos, "check its $ref targets and keywords against https://json-schema.org/understanding-json-schema", "%s is not a valid JSON Schema: %v", what, err)
}

// leaves returns the failures of a validation error worth reporting: where several fail at one
// location (the branches of an anyOf), a type mismatch is dropped in favor of the more specific
// failure: `type: strin` is best explained by the list of type names, not by "want array".
func leaves(e *jsonschema.ValidationError) []*jsonschema.Error {
	specific := map[string]bool{}
	for _, l := range e.Errors {
		if l.Keyword != "type" {
			specific[strings.Join(l.InstanceLocation, "/")] = true
		}
	}
	var out []*jsonschema.Error
	for _, l := range e.Errors {
		if l.Keyword == "type" && specific[strings.Join(l.InstanceLocation, "/")] {
			continue
		}
		out = append(out, l)
	}
	return out
}

// nodeAt follows a JSON pointer's tokens into a YAML tree, stopping at the deepest node it finds.
func nodeAt(n *yaml.Node, tokens []string) *yaml.Node {
	for _, tok := range tokens {
		next := (*yaml.Node)(nil)
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok {
					next = n.Content[i+1]
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return n
}

// ValidateResult checks the result file data (named file in messages) against the actor's result
// contract and returns every way it fails, each positioned in the file: JSON is read as YAML to
// keep lines and columns. The error is non-nil only when the contract itself cannot be compiled.
func ValidateResult(r *Result, file string, data []byte) (Diagnostics, error) {
	sch, err := CompileResultSchema(r)
	if err != nil {
		return nil, err
	}
	what := "the result does not satisfy " + r.Named.Value
	if r.Named.Value == "" {
		what = "the result does not satisfy its inline schema"
	}
	rep := &reporter{file: file}
	doc, err := jsonschema.Decode(data)
	if err != nil {
		var se *json.SyntaxError
		var ne *jsonschema.NumberError
		at := Pos{1, 1}
		switch {
		case errors.As(err, &ne):
			hint := fmt.Sprintf("write a number with an exponent within ±%d and at most %d digits", jsonschema.MaxExponent, jsonschema.MaxDigits)
			rep.errorf(offsetPos(data, min(int(ne.Offset), len(data))), hint, "the result's number %s is too large to check exactly", ne.Literal)
			return rep.diags, nil
		case errors.As(err, &se):
			at = offsetPos(data, min(max(int(se.Offset)-1, 0), len(data)))
		}
		rep.errorf(at, "write one JSON object", "the result is not JSON: %v", err)
		return rep.diags, nil
	}
	if err := strictjson.Check(data); err != nil {
		var ke *strictjson.KeyError
		if !errors.As(err, &ke) {
			return nil, err
		}
		rep.errorf(Pos{ke.Line, ke.Col}, ke.Fix(), "%s: key %q in %s repeats %q, and readers disagree on which one counts", what, ke.Key, cmp.Or(ke.Pointer, "the top-level object"), ke.First)
		return rep.diags, nil
	}
	verr := sch.Validate(doc)
	if verr == nil {
		return nil, nil
	}
	var tree yaml.Node
	_ = yaml.Unmarshal(data, &tree)
	root := &tree
	if len(tree.Content) > 0 {
		root = tree.Content[0]
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		rep.errorf(Pos{1, 1}, "", "%s: %v", what, verr)
		return rep.diags, nil
	}
	for _, leaf := range leaves(ve) {
		at := Pos{1, 1}
		if root.Line > 0 {
			at = pos(nodeAt(root, leaf.InstanceLocation))
		}
		loc := "/" + strings.Join(leaf.InstanceLocation, "/")
		rep.errorf(at, contractRules[r.Named.Value+"#"+leaf.SchemaLocation], "%s: at %s: %s", what, loc, leaf.Message)
	}
	return rep.diags.Sort(), nil
}
