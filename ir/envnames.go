package ir

import (
	"slices"
	"strings"
)

// Reserved param names.
//
// A param becomes an environment variable of the actor's process, and its value may be text any
// outsider wrote (subject.text, a comment on an issue). Every program of the box reads some of its
// environment as configuration: the shell, the dynamic linker, git, the agent CLI, and the
// language runtimes, package managers and build tools the agent calls. Many of those variables
// decide what code runs (LD_PRELOAD, BASH_ENV, GIT_SSH_COMMAND, NODE_OPTIONS, MAKEFLAGS,
// _JAVA_OPTIONS, LESSOPEN, GLIBC_TUNABLES), where code is downloaded from (PIP_INDEX_URL, GOPROXY,
// GOSUMDB, AWS_ENDPOINT_URL) or whom TLS trusts (SSL_CERT_FILE). No list of variables can keep
// up with the tools, so the rule is three patterns over the name:
//
//  1. a namespace a tool owns: any name starting with one of reservedEnvPrefixes (GIT_, NPM_,
//     PYTHON, GO, AWS_, CLAUDE_, ...). A tool adds variables inside its namespace over time; the
//     whole namespace is the tool's. A name starting with _ is tool-internal by convention
//     (_JAVA_OPTIONS, the shell's _).
//  2. a conventional configuration suffix: reservedEnvSuffixes (…PATH, …_HOME, …FLAGS, …_OPTS,
//     …_OPTIONS, …_PROXY, …_CONFIG, …_CA_BUNDLE). These are how tools outside any list name
//     their search paths, install roots, extra arguments and proxies (CLASSPATH, MAVEN_OPTS,
//     RUSTFLAGS, REQUESTS_CA_BUNDLE).
//  3. an exact name read without a namespace: reservedEnvNames (HOME, SHELL, IFS, ENV, CC,
//     CXX, MAKEFLAGS, EDITOR, PAGER, TMPDIR, EMAIL, ...): POSIX and the shell, the make and C
//     toolchain conventions, and the programs git and the CLIs start (editor, pager, browser).
//
// The cost is that some harmless names are refused (GOAL starts with GO); the fix is a
// different name, and validate suggests one that passes (SUBJECT_GOAL).
var (
	reservedEnvPrefixes = []string{
		"_",
		// The runner, the CI host and autonomy itself.
		"AUTONOMY_", "GITHUB_", "RUNNER_", "ACTIONS_", "INPUT_", "STATE_", "CI_",
		// The agent CLIs and model APIs.
		"CLAUDE_", "CODEX_", "OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "MCP_", "OLLAMA_", "HF_", "HUGGINGFACE_",
		// The dynamic linker, libc and the locale.
		"LD_", "DYLD_", "GLIBC_", "MALLOC_", "LC_", "GCONV_", "NLS",
		// The shells and terminal programs.
		"BASH_", "ZDOT", "HIST", "LESS", "GREP_", "TERM",
		// git, GitHub's CLI, ssh, gpg and TLS.
		"GIT_", "GH_", "HUB_", "SSH_", "GPG_", "GNUPG", "SSL_", "OPENSSL_", "CURL_", "WGET", "REQUESTS_",
		// Language runtimes, package managers and build tools.
		"NODE_", "NPM_", "YARN_", "PNPM_", "COREPACK_", "BUN_", "DENO_",
		"PYTHON", "PIP_", "PIPX_", "UV_", "POETRY_", "CONDA_", "VIRTUAL_ENV", "TOX_",
		"GO", "CGO_",
		"JAVA", "JDK_", "MAVEN_", "GRADLE_", "SBT_", "ANT_",
		"PERL", "RUBY", "GEM_", "BUNDLE_", "CARGO_", "RUST", "DOTNET_", "NUGET_", "PHP", "COMPOSER_",
		// Containers, clouds and infrastructure tools.
		"DOCKER_", "BUILDKIT_", "COMPOSE_", "KUBE", "HELM_", "AWS_", "AZURE_", "GCLOUD_", "CLOUDSDK_", "TF_", "ANSIBLE_", "NIX_", "HOMEBREW_",
		// Desktop and session plumbing.
		"XDG_", "DBUS_", "SUDO_", "DEBIAN_", "DPKG_", "APT_", "PG",
	}
	reservedEnvSuffixes = []string{
		"PATH", "_HOME", "FLAGS", "_OPTS", "_OPTIONS", "_PROXY", "_CONFIG", "_CA_BUNDLE", "_CERTS",
	}
	reservedEnvNames = []string{
		// POSIX and the shells.
		"HOME", "SHELL", "BASHOPTS", "SHELLOPTS", "USER", "LOGNAME", "PWD", "OLDPWD", "TMPDIR", "TMP", "TEMP", "IFS",
		"ENV", "PROMPT_COMMAND", "GLOBIGNORE", "FIGNORE", "INPUTRC", "TMOUT", "MAIL", "MAILCHECK",
		"PS1", "PS2", "PS3", "PS4", "SHLVL", "UID", "EUID", "PPID", "OPTIND", "OPTARG", "OPTERR",
		"LANG", "LANGUAGE", "TZ", "TZDIR", "HOSTNAME", "HOSTALIASES", "LOCALDOMAIN", "POSIXLY_CORRECT",
		"COLUMNS", "LINES", "DISPLAY", "NO_COLOR", "FORCE_COLOR", "COLORTERM", "CI",
		// The make and C toolchain conventions.
		"CC", "CXX", "CPP", "LD", "AR", "AS", "NM", "RANLIB", "STRIP", "OBJCOPY", "OBJDUMP", "FC", "F77",
		"YACC", "LEX", "MAKE", "MAKELEVEL", "MAKEFILES", "LDLIBS",
		// Programs other programs start, and what they read.
		"EDITOR", "VISUAL", "PAGER", "MANPAGER", "BROWSER", "EMAIL", "NETRC", "GZIP", "BZIP", "BZIP2",
		"XZ_DEFAULTS", "ZSTD_CLEVEL",
	}
)

// IsReservedEnv reports whether name, a param name, is one a tool of the box may read from its
// environment (the rule is above). Such a name is refused as a param name, since its value may be
// untrusted text.
func IsReservedEnv(name string) bool {
	for _, n := range reservedEnvNames {
		if name == n {
			return true
		}
	}
	for _, p := range reservedEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, s := range reservedEnvSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// safeEnvName turns a suggested env name that is reserved, or bare, into one that is not.
func safeEnvName(name string) string {
	name = strings.TrimLeft(name, "_")
	if name == "" {
		return "ITEM"
	}
	for _, cand := range []string{name, "SUBJECT_" + name, "SUBJECT_" + name + "_VALUE"} {
		if !IsReservedEnv(cand) {
			return cand
		}
	}
	return "ITEM"
}

// ReservedEnvPatterns returns copies of the three patterns IsReservedEnv applies (exact names,
// prefixes, suffixes), for a check that cannot call it, such as an admission policy's CEL.
func ReservedEnvPatterns() (names, prefixes, suffixes []string) {
	return slices.Clone(reservedEnvNames), slices.Clone(reservedEnvPrefixes), slices.Clone(reservedEnvSuffixes)
}
