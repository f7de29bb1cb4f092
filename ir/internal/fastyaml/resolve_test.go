package fastyaml

import (
	"regexp"
	"testing"

	"gopkg.in/yaml.v3"
)

// yamlStyleFloat is yaml.v3's own pattern, which isYAMLFloat implements by hand.
var yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// FuzzResolvePlain checks tag resolution directly against yaml.v3's resolver, which
// yaml.Node.ShortTag applies to untagged scalars, without the parser in between.
func FuzzResolvePlain(f *testing.F) {
	for _, s := range randomScalars {
		f.Add(s)
	}
	for _, s := range []string{
		"", "+", "-", ".", "+.", "-.5", "1.", "1.e5", ".e5", "1e", "1e+", "1E-3", "+1_0", "1__0", "_1",
		"0x", "0xG", "0X1F", "-0x1F", "0o", "0o8", "-0o17", "0b", "0b2", "-0b1", "0b-1", "-0b-1", "0o-7",
		"18446744073709551615", "18446744073709551616", "-9223372036854775809", "0b" + "1111111111111111111111111111111111111111111111111111111111111111",
		"0777", "0888", "1:20", "2001-12-14", "2001-12-14T21:59:43.1Z", "2001-12-14 21:59:43", "2001-02-30",
		"1234-", "12345-1-1", "Infinity", "+inf", "nan", ".NaN", ".Nan", "~~", "nULL", "TRUE ", "0x1p-2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := (&yaml.Node{Kind: yaml.ScalarNode, Value: s}).ShortTag()
		if got := resolvePlain(s); got != want {
			t.Errorf("resolvePlain(%q) = %s, yaml.v3 resolves %s", s, got, want)
		}
		if got, want := isYAMLFloat(s), yamlStyleFloat.MatchString(s); got != want {
			t.Errorf("isYAMLFloat(%q) = %v, want %v", s, got, want)
		}
	})
}
