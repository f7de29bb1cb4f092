package modelproxy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
)

// BenchmarkDirect and BenchmarkThroughProxy stream one Responses API answer
// from the scripted endpoint, straight and through the proxy (with a
// transcript): the difference of their ns/op is what the proxy adds to a
// request, and BenchmarkThroughProxy's B/op what it allocates for one.
func BenchmarkDirect(b *testing.B) {
	fake := modelfake.Start(modelfake.Turn{Text: strings.Repeat("word ", 400)})
	defer fake.Close()
	benchStream(b, fake.URL()+"/v1/responses", "sk-direct")
}

func BenchmarkThroughProxy(b *testing.B) {
	fake := modelfake.Start(modelfake.Turn{Text: strings.Repeat("word ", 400)})
	defer fake.Close()
	h := start(b, fake.URL(), nil)
	benchStream(b, h.url+"/openai/v1/responses", placeholder)
}

func benchStream(b *testing.B, url, key string) {
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(responsesBody))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n == 0 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
}
