package fastyaml

import "testing"

// FuzzParse is the differential check: Parse must never panic, and whenever it takes an input,
// yaml.v3 must accept it too and build the same tree.
func FuzzParse(f *testing.F) {
	for _, tc := range cases {
		f.Add([]byte(tc.in))
	}
	f.Add(profile(2))
	f.Fuzz(func(t *testing.T, in []byte) {
		if _, err := compare(in); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
	})
}
