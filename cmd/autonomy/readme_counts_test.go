//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReadmeFirstCommandCounts keeps README's account of its first command true: the number of
// workflows it says compile writes under .github/workflows/ and the summary line it quotes.
func TestReadmeFirstCommandCounts(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	wfRe := regexp.MustCompile(`it lists every file it creates on stdout \((\d+) workflows under`)
	sumRe := regexp.MustCompile("`(gh-actions: \\d+ created, 0 updated, 0 deleted, 0 unchanged) in /tmp/sdlc-fleet`")
	wf, sum := wfRe.FindStringSubmatch(text), sumRe.FindStringSubmatch(text)
	if wf == nil || sum == nil {
		t.Fatalf("README no longer describes its first command's output as this test reads it (%v, %v)", wf, sum)
	}
	dir := filepath.Join(t.TempDir(), "sdlc-fleet")
	_, errOut, code := cli(t, nil, "compile", filepath.Join("..", "..", "profiles", "sdlc"), "--target", "gh-actions", "--dir", dir)
	if code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, errOut)
	}
	entries, err := os.ReadDir(filepath.Join(dir, ".github", "workflows"))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := strconv.Atoi(wf[1]); len(entries) != want {
		t.Errorf("README says %d workflows; compile wrote %d", want, len(entries))
	}
	if !strings.Contains(errOut, sum[1]+" in "+dir) {
		t.Errorf("README quotes %q; compile said:\n%s", sum[1], errOut)
	}
}
