package sariftest

import (
	"strings"
	"testing"
)

// TestValidateRejectsWhatTheSchemaForbids: the official schema is in force, so a
// pass from Validate means something.
func TestValidateRejectsWhatTheSchemaForbids(t *testing.T) {
	const good = `{"version":"2.1.0","$schema":"https://json.schemastore.org/sarif-2.1.0.json","runs":[{"tool":{"driver":{"name":"x"}},"results":[]}]}`
	if err := Validate([]byte(good)); err != nil {
		t.Fatalf("a minimal log: %v", err)
	}
	for name, log := range map[string]string{
		"version 2.2":     strings.Replace(good, `"2.1.0"`, `"2.2.0"`, 1),
		"no driver name":  strings.Replace(good, `{"name":"x"}`, `{}`, 1),
		"unknown key":     strings.Replace(good, `"runs"`, `"extra":1,"runs"`, 1),
		"level fatal":     strings.Replace(good, `"results":[]`, `"results":[{"level":"fatal","message":{"text":"m"}}]`, 1),
		"no message":      strings.Replace(good, `"results":[]`, `"results":[{"level":"error"}]`, 1),
		"line 0":          strings.Replace(good, `"results":[]`, `"results":[{"message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},"region":{"startLine":0}}}]}]`, 1),
		"uri not a uri":   strings.Replace(good, `"results":[]`, `"results":[{"message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a b%"}}}]}]`, 1),
		"$schema not uri": strings.Replace(good, `"https://json.schemastore.org/sarif-2.1.0.json"`, `"not a uri"`, 1),
		"not JSON":        good[:20],
	} {
		if err := Validate([]byte(log)); err == nil {
			t.Errorf("%s: accepted\n%s", name, log)
		}
	}
}
