package mergecheck

import (
	"strings"
	"testing"
)

// What protects a path protects every spelling macOS or Windows reads as it; a scope, which
// permits, matches only the spelling it names.
func TestVetFolds(t *testing.T) {
	for _, c := range []struct {
		path, scope, want string // want: a word of the reason, "" for none
	}{
		{".AUTONOMY/local/actors/x.json", "", "installation"},
		{".Autonomy/policy.json", "", "installation"},
		{".GitHub/workflows/x.yml", "", "workflows"},
		{".github/WORKFLOWS/x.yml", "", "workflows"},
		{".github/Actions/a/action.yml", "", "actions"},
		{".github\u200c/workflows/x.yml", "", "workflows"}, // HFS+ ignores U+200C
		{".github/workflows\ufeff/x.yml", "", "workflows"},
		{".github/workflowſ/x.yml", "", "workflows"}, // ſ folds to s
		{".githubx/workflows/x.yml", "", ""},
		{"src/a.go", "src/**", ""},
		{"SRC/a.go", "src/**", "src/** only"},
		{"Src/a.go", "src/**", "src/** only"},
		{"src/a.go", "SRC/**", "SRC/** only"},
		{"se\u0301/a", "s\u00e9/**", "only"}, // another normalization is another path for the scope
	} {
		reason, bad := Vet([]string{c.path}, "develop", c.scope)
		if c.want == "" && reason != "" || c.want != "" && (!strings.Contains(reason, c.want) || len(bad) != 1) {
			t.Errorf("Vet(%q, scope %q) = %q %q, want %q", c.path, c.scope, reason, bad, c.want)
		}
	}
}

// Human-required paths and governing documents (Matching) are matched in any spelling.
func TestMatchingFolds(t *testing.T) {
	globs := []string{"docs/VISION.md", "deploy/**", "caf\u00e9/*.md"}
	for _, c := range []struct {
		path string
		want bool
	}{
		{"docs/VISION.md", true},
		{"DOCS/VISION.md", true},
		{"docs/vision.MD", true},
		{"Deploy/prod.yml", true},
		{"DEPLOY", true},
		{"CAFE\u0301/a.md", true}, // NFD and upper case
		{"docs/VISION.mdx", false},
		{"deployment/x", false},
	} {
		if got := len(Matching([]string{c.path}, globs)) == 1; got != c.want {
			t.Errorf("Matching(%q) = %v, want %v", c.path, got, c.want)
		}
	}
	if !Match("docs/VISION.md", "docs/VISION.md") || Match("docs/VISION.md", "DOCS/VISION.md") {
		t.Error("Match is not exact")
	}
}

// A glob that protects paths reads as .gitignore and CODEOWNERS read theirs (attack29: "/SECURITY.md",
// "docs/" and "src/secure", written so, protected nothing and no command said so): from the
// repository's root, a folder's name protecting what it holds. A scope, which grants, stays exact.
func TestProtectsReadsAFolderAsWhatItHolds(t *testing.T) {
	for _, c := range []struct {
		glob, path string
		want       bool
	}{
		{"/SECURITY.md", "SECURITY.md", true},
		{"./SECURITY.md", "SECURITY.md", true},
		{"docs/", "docs/vision.md", true},
		{"docs/", "docs/a/b.md", true},
		{"docs/", "docs", true},
		{"/docs/", "Docs/Vision.md", true},
		{"src/secure", "src/secure/x.go", true},
		{"src/secure", "src/secure", true},
		{"docs/*", "docs/a/b.md", true},
		{"**/migrations", "db/migrations/1.sql", true},
		{"/", "anything/at/all", true},
		{"docs/", "docsx/a.md", false},
		{"src/secure", "src/secure.go", false},
		{"src/secure", "src/securex/y.go", false},
		{"src/secure", "lib/src/secure/y.go", false},
		{"./src/secure", "lib/src/secure/y.go", false},
		{"/SECURITY.md", "docs/SECURITY.md", false},
		{"SECURITY.md", "docs/SECURITY.md", true},
		{"*.md", "docs/x.md", true}, // without a "/" in it: at any depth
		{"CODEOWNERS", ".github/CODEOWNERS", true},
		{"docs/", "src/docs/a.md", true},
		{"/docs/", "src/docs/a.md", false},
		{"docs//", "docs/VISION.md", true},
		{"docs/*.md", "docs/a/b.md", false}, // with one: from the root, * within one folder
		{"docs/*.md", "src/docs/a.md", false},
		{"", "x", false},
	} {
		if got := Protects(c.glob, c.path); got != c.want {
			t.Errorf("Protects(%q, %q) = %v, want %v", c.glob, c.path, got, c.want)
		}
		if got := len(Matching([]string{c.path}, []string{c.glob})) == 1; got != c.want {
			t.Errorf("Matching([%q], [%q]) = %v, want %v", c.path, c.glob, got, c.want)
		}
	}
	for _, scope := range []string{"docs/", "src/secure", "docs/*"} {
		if reason, _ := Vet([]string{"docs/a/b.md", "src/secure/x.go"}, "dev", scope); reason == "" {
			t.Errorf("a scope of %q granted what it does not match", scope)
		}
	}
}

func TestCollisions(t *testing.T) {
	tree := []string{"README", "docs/VISION.md", "src/a.go", "caf\u00e9/x", "Makefile"}
	for _, c := range []struct {
		files []string
		want  int
	}{
		{[]string{"src/b.go"}, 0},
		{[]string{"DOCS/VISION.md"}, 1},    // the same file
		{[]string{"Docs/other.md"}, 1},     // the same folder
		{[]string{"readme"}, 1},            // the same file at the top
		{[]string{"SRC"}, 1},               // a file where a folder is
		{[]string{"cafe\u0301/y"}, 1},      // another normalization
		{[]string{"src/A.GO", "src/b"}, 1}, // one of two
		{[]string{"x/a", "X/b"}, 2},        // two new ones collide with each other
		{[]string{"makefile.d/x"}, 0},
	} {
		if got := Collisions(c.files, append(tree, c.files...)); len(got) != c.want {
			t.Errorf("Collisions(%q) = %q, want %d", c.files, got, c.want)
		}
	}
}

// Changes refuses a proposal that adds a path spelled like an existing one but for the case.
func TestChangesRefusesCollisions(t *testing.T) {
	dir, run := repo(t)
	write(t, dir, "docs/VISION.md", "v\n")
	run("add", "-A")
	run("commit", "-qm", "vision")
	base := run("rev-parse", "HEAD")
	write(t, dir, "DOCS/VISION.md", "mine\n")
	run("add", "-A")
	run("commit", "-qm", "case")
	_, reason, bad, err := Changes(gitIn(dir), base, "HEAD", "develop", "")
	if err != nil || !strings.Contains(reason, "case") || len(bad) != 1 || !strings.HasPrefix(bad[0], "DOCS/VISION.md") {
		t.Fatalf("a path colliding with docs/VISION.md: %q %v %v", reason, bad, err)
	}
	if _, reason, bad, err := Landed(gitIn(dir), nil, base, "HEAD", "develop", ""); err != nil || !strings.Contains(reason, "case") {
		t.Fatalf("Landed: %q %v %v", reason, bad, err)
	}
}

// Unread names what Protects does not read: a class, a brace list, a negation, a backslash; a
// glob it reads as written (braces that make no list included) is "".
func TestUnread(t *testing.T) {
	for glob, want := range map[string]string{
		"[Ss]ecrets/**":               "character class",
		"*.{pem,key}":                 "brace list",
		"secrets/{prod,staging}/**":   "brace list",
		"!docs/**":                    "negation",
		`docs\VISION.md`:              "backslash",
		" ":                           "empty",
		"docs/**":                     "",
		"${{ github.event.title }}/x": "",
		"{a}/b":                       "",
		"/SECURITY.md":                "",
	} {
		if got := Unread(glob); want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("Unread(%q) = %q, want %q", glob, got, want)
		}
	}
}
