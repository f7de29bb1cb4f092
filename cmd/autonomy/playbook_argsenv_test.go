package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArgsFromEnv: --args-env makes each listed variable set to a non-empty value an arg (an
// empty or unset one is left out, so the input's default applies); a word that is no variable
// name is a usage error.
func TestArgsFromEnv(t *testing.T) {
	env := map[string]string{"ITEM": "7", "REPORT": "it's \"broken\"\n$(touch pwned)", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got, err := argsFromEnv("ITEM, REPORT,EMPTY,UNSET,", lookup)
	if err != nil || got != `{"ITEM":"7","REPORT":"it's \"broken\"\n$(touch pwned)"}` {
		t.Errorf("got %s, %v", got, err)
	}
	if _, err := argsFromEnv("ITEM,1X", lookup); err == nil || !strings.Contains(err.Error(), `"1X" is not an environment variable name`) {
		t.Errorf("a bad name: %v", err)
	}
}

// TestArgsEnvFlag: playbook run reads the inputs from the environment with --args-env, and
// refuses it together with --args-json.
func TestArgsEnvFlag(t *testing.T) {
	dir := t.TempDir()
	book := filepath.Join(dir, "echo.yml")
	if err := os.WriteFile(book, []byte("name: echo\nargs:\n  GREETING: { default: none }\nsteps:\n  - id: say\n    command: cli echo $args.GREETING\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GREETING", "hello there")
	t.Chdir(dir)
	code, out, errOut := run(t, "playbook", "run", book, "--args-env", "GREETING", "--state", filepath.Join(dir, "state.db"))
	if code != 0 || !strings.Contains(out, `"stdout": "hello there\n"`) {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = run(t, "playbook", "run", book, "--args-env", "GREETING", "--args-json", "{}", "--state", filepath.Join(dir, "state.db"))
	if code != 2 || !strings.Contains(errOut, "give --args-json or --args-env, not both") {
		t.Fatalf("both: exit %d %s", code, errOut)
	}
}
