package engine

import (
	"bytes"
	"compress/gzip"
	"context"
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

// TestRunStepCarriesNoSecret: a step that prints the secret it reads hands the next job data in
// which the secret is redacted (the data travels through job outputs and env, which GitHub logs),
// its stdout and its json alike; the step's own result is redacted too.
func TestRunStepCarriesNoSecret(t *testing.T) {
	const secret = "s3cr3t-value-0123456789"
	e := &Engine{Secret: func(name string) (string, bool) { return secret, name == "API_KEY" }}
	d := &Data{}
	res, err := e.RunStep(context.Background(), StepSpec{ID: "leak", Namespace: "cli", Argv: []string{"printf", `{"key":"%s"}`, "$secrets.API_KEY"},
		Output: "json", Secrets: []string{"API_KEY"}}, d, t.TempDir(), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("RunStep: %v", err)
	}
	if strings.Contains(res.Stdout, secret) {
		t.Errorf("the step's result shows the secret: %q", res.Stdout)
	}
	enc, err := EncodeData(d)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeData(enc)
	if err != nil || len(back.Results) != 1 {
		t.Fatalf("decode: %+v %v", back, err)
	}
	r := back.Results[0]
	if strings.Contains(r.Stdout, secret) || strings.Contains(string(r.JSON), secret) || !strings.Contains(r.Stdout, "key") {
		t.Errorf("the carried data holds the secret: stdout %q json %s", r.Stdout, r.JSON)
	}
}
