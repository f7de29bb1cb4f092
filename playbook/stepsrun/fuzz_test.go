package stepsrun

import (
	"testing"

	"github.com/autonomyhq/autonomy/playbook/steps"
)

// FuzzCapture: whatever an agent answers, capturing it never panics, and a captured value fits
// its type (an enum's value is one of its values).
func FuzzCapture(f *testing.F) {
	for _, s := range []string{"major", "`Minor`.", "```json\n{\"v\": 1}\n```", "{\"v\": \"x\"}", "42", "true", "```", "``````", "{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		for _, typ := range []string{steps.String, steps.Number, steps.Boolean, "json", steps.Enum} {
			for _, extract := range []string{"", "v"} {
				o := &steps.Output{Type: typ, Extract: extract, Options: []string{"major", "minor"}}
				v, err := capture(o, msg)
				if err == nil && typ == steps.Enum && v != "major" && v != "minor" {
					t.Fatalf("enum captured %q", v)
				}
			}
		}
	})
}
