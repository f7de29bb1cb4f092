package engine

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"math/rand"
	"strings"
	"testing"
)

// TestStepData: the data one job hands the next round-trips, and every bad input is an error
// naming what is wrong, never a panic.
func TestStepData(t *testing.T) {
	d := &Data{Results: []record{{ID: "a", Status: "ok", Stdout: "x\n"}}}
	s, err := EncodeData(d)
	if err != nil || strings.ContainsAny(s, "\n\r") {
		t.Fatalf("encode: %q %v", s, err)
	}
	back, err := DecodeData(s)
	if err != nil || len(back.Results) != 1 || back.Results[0].Stdout != "x\n" {
		t.Fatalf("decode: %+v %v", back, err)
	}
	if d, err := DecodeData(""); err != nil || len(d.Results) != 0 {
		t.Errorf("no data: %+v %v", d, err)
	}
	gz := func(raw string) string {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(raw))
		zw.Close()
		return base64.StdEncoding.EncodeToString(b.Bytes())
	}
	for in, want := range map[string]string{
		"not base64!": "not base64",
		base64.StdEncoding.EncodeToString([]byte("plain")): "not gzip",
		gz("{"):                               "not JSON",
		strings.Repeat("A", MaxEncodedData+4): "over",
	} {
		if _, err := DecodeData(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeData(%.20q…) = %v, want an error saying %q", in, err, want)
		}
	}
	// Output that does not compress past the cap is refused with the fix.
	noise := make([]byte, MaxEncodedData)
	rand.New(rand.NewSource(1)).Read(noise)
	if _, err := EncodeData(&Data{Results: []record{{ID: "big", Stdout: base64.StdEncoding.EncodeToString(noise)}}}); err == nil || !strings.Contains(err.Error(), "lower maxOutputBytes") {
		t.Errorf("an oversized output encoded: %v", err)
	}
}
