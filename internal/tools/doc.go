package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Reference is the Markdown reference of the catalog that docs/tools.md holds between its
// generated markers: per tool its capability, whether it is an effect, and its input fields.
func Reference() string {
	var b strings.Builder
	b.WriteString("| tool | needs | kind | default cap | what it does |\n|---|---|---|---|---|\n")
	for _, t := range Catalog {
		needs, kind := t.Capability, "read"
		if needs == "" {
			needs = "every agent"
		} else {
			needs = "`" + needs + "`"
		}
		limit := "none"
		if t.Effect {
			kind, limit = "effect", fmt.Sprint(DefaultMax[t.Name])
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", t.Name, needs, kind, limit, t.Description)
	}
	for _, t := range Catalog {
		fmt.Fprintf(&b, "\n### `%s`\n\n", t.Name)
		var s struct {
			Properties map[string]struct {
				Type        any    `json:"type"`
				Description string `json:"description"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		_ = json.Unmarshal(t.Schema(), &s)
		if len(s.Properties) == 0 {
			b.WriteString("No input.\n")
			continue
		}
		b.WriteString("| field | type | required | meaning |\n|---|---|---|---|\n")
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			p := s.Properties[n]
			req := "no"
			if slices.Contains(s.Required, n) {
				req = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %v | %s | %s |\n", n, typeName(p.Type), req, p.Description)
		}
	}
	return b.String()
}

func typeName(t any) string {
	switch v := t.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, x := range v {
			parts = append(parts, fmt.Sprint(x))
		}
		return strings.Join(parts, " or ")
	}
	return "any"
}
