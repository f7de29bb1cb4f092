package ir

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestReservedParamNames(t *testing.T) {
	reserved := []string{
		// The names issue 14 found validating when fed from subject.text.
		"CC", "MAKEFLAGS", "PIP_INDEX_URL", "AWS_ENDPOINT_URL", "_JAVA_OPTIONS", "SSL_CERT_FILE",
		"GLIBC_TUNABLES", "LESSOPEN", "GOSUMDB", "CLAUDE_CONFIG_DIR",
		// The names the old list held.
		"PATH", "HOME", "SHELL", "IFS", "ENV", "BASH_ENV", "PS4", "PROMPT_COMMAND", "EDITOR", "PAGER",
		"TMPDIR", "GITHUB_TOKEN", "RUNNER_TEMP", "ACTIONS_RUNTIME_TOKEN", "AUTONOMY_DIR", "INPUT_X",
		"GIT_SSH_COMMAND", "GH_TOKEN", "SSH_AUTH_SOCK", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES",
		"NODE_OPTIONS", "NPM_CONFIG_REGISTRY", "PYTHONPATH", "PYTHONSTARTUP", "JAVA_TOOL_OPTIONS",
		"GOFLAGS", "GOPROXY", "HTTPS_PROXY", "NO_PROXY", "LC_ALL", "_",
		// One per pattern: a namespace, a suffix, an exact name.
		"CODEX_HOME", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "CURL_CA_BUNDLE", "GOEXPERIMENT",
		"CLASSPATH", "MAVEN_OPTS", "RUSTFLAGS", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
		"CXX", "EMAIL", "KUBECONFIG", "PGPASSWORD", "LESSKEY", "LDFLAGS",
	}
	free := []string{"ISSUE", "ITEM", "WHY", "BODY", "ROLE", "PR", "ASK", "WHO", "TEXT", "REF", "MODE",
		"FROM", "AUTHOR", "PROBE_REF", "PROBE_TEXT", "SUBJECT_CC", "SUBJECT_PATH_VALUE", "TICKET_ID"}
	for _, name := range reserved {
		if !IsReservedEnv(name) {
			t.Errorf("%s is not reserved", name)
		}
		// The suggested replacement is itself accepted.
		if s := safeEnvName(name); IsReservedEnv(s) || !paramNameRe().MatchString(s) {
			t.Errorf("%s: suggestion %s is reserved or invalid", name, s)
		}
	}
	for _, name := range free {
		if IsReservedEnv(name) {
			t.Errorf("%s is reserved", name)
		}
	}
}

// TestReservedParamNamesAreRefused runs each name of the issue through validate, fed from
// subject.text, and checks the error is at the name.
func TestReservedParamNamesAreRefused(t *testing.T) {
	for _, name := range []string{"CC", "MAKEFLAGS", "PIP_INDEX_URL", "AWS_ENDPOINT_URL", "_JAVA_OPTIONS",
		"SSL_CERT_FILE", "GLIBC_TUNABLES", "LESSOPEN", "GOSUMDB", "CLAUDE_CONFIG_DIR"} {
		src := fmt.Sprintf("schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  hello:\n    behavior: hello.sh\n    triggers:\n      - dispatch: true\n        params: { %s: subject.text }\n", name)
		p, diags := Parse("x.yml", t.TempDir(), []byte(src))
		if p == nil {
			t.Fatalf("%s: %s", name, diags)
		}
		diags = append(diags, Validate(p)...)
		want := fmt.Sprintf("x.yml:8:19: actor \"hello\": param name %q is reserved", name)
		if !strings.Contains(diags.String(), want) {
			t.Errorf("%s: diagnostics lack %q:\n%s", name, want, diags)
		}
	}
}

// TestReservedEnvListsAreMinimal keeps the three lists honest: no exact name that a pattern
// already covers, and docs/params.md shows every entry.
func TestReservedEnvListsAreMinimal(t *testing.T) {
	doc, err := os.ReadFile("../docs/params.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range reservedEnvNames {
		for _, p := range reservedEnvPrefixes {
			if strings.HasPrefix(n, p) {
				t.Errorf("%s is covered by the prefix %s", n, p)
			}
		}
		for _, s := range reservedEnvSuffixes {
			if strings.HasSuffix(n, s) {
				t.Errorf("%s is covered by the suffix %s", n, s)
			}
		}
		if !strings.Contains(string(doc), "`"+n+"`") {
			t.Errorf("docs/params.md does not list %s", n)
		}
	}
	for _, p := range reservedEnvPrefixes {
		if !strings.Contains(string(doc), "`"+p+"*`") {
			t.Errorf("docs/params.md does not list %s*", p)
		}
	}
	for _, s := range reservedEnvSuffixes {
		if !strings.Contains(string(doc), "`*"+s+"`") {
			t.Errorf("docs/params.md does not list *%s", s)
		}
	}
}

// TestParamsDocExample: the diagnostic docs/params.md shows is the one validate prints.
func TestParamsDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/params.md")
	if err != nil {
		t.Fatal(err)
	}
	src := "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  hello:\n    behavior: hello.sh\n    triggers:\n      - dispatch: true\n        params:\n          MAKEFLAGS: subject.text\n"
	p, diags := Parse("ir.yml", t.TempDir(), []byte(src))
	diags = append(diags, Validate(p)...)
	for _, d := range diags {
		if strings.Contains(d.Message, "MAKEFLAGS") && !strings.Contains(string(doc), d.String()) {
			t.Errorf("docs/params.md does not show the diagnostic as validate prints it:\n%s", d)
		}
	}
}
