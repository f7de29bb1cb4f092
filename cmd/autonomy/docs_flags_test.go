package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// docCommand finds `autonomy …` command lines in markdown: in code blocks, one a line, and in
// inline code spans.
var (
	docBlock  = regexp.MustCompile("(?ms)^```[a-z]*\n(.*?)^```")
	docInline = regexp.MustCompile("`([^`\n]*\\bautonomy [^`\n]*)`")
	cmdWord   = regexp.MustCompile(`^[a-z][a-z-]*$`)
)

// docCommandLines returns every line of text that runs autonomy, from its "autonomy" on.
func docCommandLines(text string) []string {
	var lines []string
	add := func(s string) {
		for _, part := range strings.Split(s, "|") {
			part = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(part), "$ "))
			for _, pre := range []string{"&&", ";", "(", "$("} {
				if i := strings.LastIndex(part, pre+" autonomy "); i >= 0 {
					part = part[i+len(pre)+1:]
				}
			}
			fields := strings.Fields(part)
			for len(fields) > 0 && strings.Contains(fields[0], "=") {
				fields = fields[1:] // env assignments
			}
			if len(fields) > 1 && fields[0] == "autonomy" {
				lines = append(lines, strings.Join(fields, " "))
			}
		}
	}
	for _, m := range docBlock.FindAllStringSubmatch(text, -1) {
		for _, l := range strings.Split(m[1], "\n") {
			add(l)
		}
	}
	for _, m := range docInline.FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	return lines
}

// TestDocsNameRealCommandsAndFlags: every `autonomy …` line of README.md and docs/ names
// commands that exist and flags those commands have, so a renamed or removed flag fails here
// before a reader finds it.
func TestDocsNameRealCommandsAndFlags(t *testing.T) {
	root := newRoot(nil, io.Discard, io.Discard)
	for line, bad := range map[string]bool{
		"autonomy compile x --no-such":                                   true,
		"autonomy runner lunch develop":                                  true,
		"autonomy runner --dir d launch develop --ref 1 # a comment --x": false,
		"autonomy runner [--dir DIR] update ID --status S [--token T]":   false,
	} {
		if got := checkDocLine(root, line) != ""; got != bad {
			t.Errorf("checkDocLine(%q) found a problem: %v, want %v", line, got, bad)
		}
	}
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range docCommandLines(string(data)) {
			checked++
			if msg := checkDocLine(root, line); msg != "" {
				t.Errorf("%s: %q: %s", filepath.Base(f), line, msg)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d command lines found in the docs", checked)
	}
}

// deliberateMistakes are command lines the docs show because they fail (to show how).
var deliberateMistakes = []string{"autonomy runner lauch", "autonomy help runner lauch", "autonomy --strict validate"}

// checkDocLine resolves line's command and checks its --flags; "" when all is well.
func checkDocLine(root *cobra.Command, line string) string {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i] // a shell comment
	}
	for _, m := range deliberateMistakes {
		if strings.HasPrefix(line, m) {
			return ""
		}
	}
	c := root
	words := strings.Fields(line)[1:]
	var flags []string
	for len(words) > 0 {
		w := strings.Trim(words[0], "[]")
		if strings.HasPrefix(w, "-") {
			// A flag before the subcommand (runner --dir D launch): skip its value too.
			flags = append(flags, w)
			words = words[1:]
			name := strings.TrimLeft(w, "-")
			if f := flagOf(c, name); f != nil && !strings.Contains(w, "=") && f.Value.Type() != "bool" && len(words) > 0 {
				words = words[1:]
			}
			continue
		}
		if !cmdWord.MatchString(w) || !c.HasSubCommands() {
			break
		}
		sub := findSub(c, w)
		if sub == nil {
			return "no command " + w + " under " + c.CommandPath()
		}
		c = sub
		words = words[1:]
	}
	for _, w := range append(flags, words...) {
		w = strings.Trim(w, "[]")
		if !strings.HasPrefix(w, "--") || w == "--" {
			continue
		}
		name := strings.TrimPrefix(w, "--")
		name, _, _ = strings.Cut(name, "=")
		name = strings.TrimRight(name, ".,;:)`'\"…")
		if name == "" || name == "help" || !cmdWord.MatchString(name) {
			continue
		}
		if flagOf(c, name) == nil {
			return c.CommandPath() + " has no flag --" + name
		}
	}
	return ""
}

// flagOf is c's flag called name: its own, persistent or not, or one a parent's persistent.
func flagOf(c *cobra.Command, name string) *pflag.Flag {
	for _, set := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags(), c.InheritedFlags()} {
		if f := set.Lookup(name); f != nil {
			return f
		}
	}
	return nil
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == name || s.HasAlias(name) {
			return s
		}
	}
	return nil
}
