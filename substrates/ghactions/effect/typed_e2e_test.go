//go:build unix

package effect_test

import (
	"context"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

var typedTokenRe = regexp.MustCompile(`autonomy:ask actor=maintainer token=([0-9a-f]{32}) at=\S+ run=\S* type=(\w+)`)

// TestTypedAskThroughControl: develop's ask_person (a decide), realized by apply against the
// installed manifest, is answered through the control workflow's command job run from the
// generated YAML with the real binary: an answer off the options is refused (nothing recorded),
// one of them is recorded with the maintainer who gave it; an inform takes /agent confirm.
func TestTypedAskThroughControl(t *testing.T) {
	t.Parallel()
	f := newOps(t)
	item := f.items[0]
	data, err := os.ReadFile(filepath.Join(f.seed, ".autonomy", "gh-actions", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := effect.ReadInstalled(data)
	if err != nil {
		t.Fatal(err)
	}
	client := github.NewClient(nil).WithAuthToken("ghs_ops")
	client.BaseURL, _ = url.Parse(f.fake.URL)
	e := &effect.Env{Client: client, Owner: "o", Repo: "r", Out: io.Discard}
	e.Policy.Box.TaskStates = map[string]string{"input-required": "needs-input"}
	ask := func(kind, extra string) (string, string) {
		t.Helper()
		line := `{"tool":"ask_person","actor":"develop","session":"9","input":{"kind":"` + kind + `","question":"Which release train?","item":"` + strconv.Itoa(item) + `"` + extra + `}}` + "\n"
		res, err := e.Apply(context.Background(), effect.ApplyOptions{Installed: m, Actor: "develop", Session: "9", Outputs: strings.NewReader(line)})
		if err != nil || len(res) != 1 || res[0].Refused != "" {
			t.Fatalf("apply: %+v %v", res, err)
		}
		mm := typedTokenRe.FindStringSubmatch(f.last(item))
		if mm == nil || mm[2] != kind {
			t.Fatalf("no typed ask marker:\n%s", f.last(item))
		}
		return mm[1], f.last(item)
	}
	token, body := ask("decide", `,"options":["monday","friday"],"in":"both trains have room"`)
	if !strings.Contains(body, "both trains have room") || !strings.Contains(body, "/agent answer "+token+" <option>") {
		t.Fatalf("the ask:\n%s", body)
	}
	f.control(f.comment(item, "ada", "OWNER", "/agent answer "+token+" sunday"), true)
	if reply := f.last(item); !strings.Contains(reply, `"sunday" is not one of the options: monday, friday`) {
		t.Fatalf("an answer off the options: %s", reply)
	}
	f.control(f.comment(item, "ada", "OWNER", "/agent answer "+token+" friday"), false)
	asks, err := effect.Asks(context.Background(), e, item)
	if err != nil {
		t.Fatal(err)
	}
	got := asks[len(asks)-1]
	if got.Token != token || got.Resolved != "answer" || got.Answer != "friday" || got.Typed.Type != "decide" {
		t.Fatalf("the decision read back: %+v", got)
	}
	found := false
	for _, c := range f.comments(item) {
		found = found || strings.HasPrefix(c, "<!-- autonomy:resolution token="+token+" verb=answer by=ada ")
	}
	if !found {
		t.Fatal("no resolution marker naming ada")
	}
	token, _ = ask("inform", "")
	f.control(f.comment(item, "ada", "OWNER", "/agent approve "+token), true)
	if reply := f.last(item); !strings.Contains(reply, "resolve it with /agent confirm") {
		t.Fatalf("approve of an inform: %s", reply)
	}
	f.control(f.comment(item, "ada", "OWNER", "/agent confirm "+token), false)
	asks, _ = effect.Asks(context.Background(), e, item)
	if got := asks[len(asks)-1]; got.Resolved != "confirm" {
		t.Fatalf("the inform: %+v", got)
	}
}
