package ghactions

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzJSONString: the manifest's string encoding is byte for byte encoding/json's with HTML
// escaping off, whatever the bytes (invalid UTF-8 included).
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "\n\r\t\b\f\x00\x1f", "<&>", "\u2028\u2029", "\xff\xfe", "é€𝄞", "${{ x }}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		(&jsonWriter{b: &got}).str(s)
		got.WriteByte('\n')
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%q: got %s, want %s", s, got.Bytes(), want.Bytes())
		}
	})
}

// TestManifestIsIndentedJSON: the hand-written manifest is what encoding/json's indenter makes of
// it, for a profile with every kind of actor, warnings and hostile strings.
func TestManifestIsIndentedJSON(t *testing.T) {
	for _, dir := range []string{"testdata/injection", "../../profiles/sdlc"} {
		_, out := compileDir(t, dir)
		data := []byte(file(t, out, ManifestPath))
		var compact, indented bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatalf("%s: manifest is not JSON: %v", dir, err)
		}
		if err := json.Indent(&indented, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		indented.WriteByte('\n')
		if !bytes.Equal(indented.Bytes(), data) {
			t.Errorf("%s: manifest is not canonically indented", dir)
		}
	}
}
