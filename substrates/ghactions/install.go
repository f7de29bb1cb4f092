package ghactions

import (
	"fmt"
	"sync"

	"github.com/autonomyhq/autonomy/internal/buildinfo"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// Tool is the autonomy the trusted jobs install: the one that compiled the workflow. Exactly
// one way of installing it is set; a Tool with none carries the Problem instead, and its
// install step fails saying so.
type Tool struct {
	// Module, Version and Sum: `go install Module/cmd/autonomy@Version`, the module zip checked
	// against Sum, its h1: checksum (what go.sum records), which stands in for the checksum
	// database. Set for a binary built by `go install module@version`.
	Module, Version, Sum string
	// Release: the release's linux binary is downloaded from Repository and checked against the
	// release's checksums.txt and, when Commit is set, against the commit it reports.
	Release string
	// Repository and Commit: without Release, the commit (a full SHA, which names its content)
	// is fetched from the git repository and built with go build.
	Repository, Commit string
	// Problem says why no job can install the compiling autonomy, and how to fix it.
	Problem string
}

// ModulePath is this module's path.
const ModulePath = "github.com/autonomyhq/autonomy"

// Repository is the git repository the jobs fetch a commit or a release from, unless
// policy.box.gh-actions.autonomy.repository names another.
const Repository = "https://" + ModulePath

// Self is the autonomy the jobs install when the compile names none (Substrate.Tool): when it is
// the zero Tool, as it is unless a test sets it, the autonomy being run, pinned from its build
// information (ToolFor) on first use, not at init: parsing the build information costs every
// autonomy process otherwise.
var Self Tool

// self is Self, or the autonomy being run when Self is the zero Tool.
func self() Tool {
	if Self == (Tool{}) {
		return running()
	}
	return Self
}

// running is the autonomy being run, pinned from its build information.
var running = sync.OnceValue(func() Tool { return ToolFor(buildinfo.Read()) })

// ToolFor pins what the jobs install from a build's information: a release's binary, else the
// module version `go install` built, else the commit a checkout was built from. A build from a
// working tree with uncommitted changes, or with no VCS stamp, names nothing a job can
// install: its Tool carries the Problem.
func ToolFor(i buildinfo.Info) Tool {
	if i.Module != "" && i.Module != ModulePath {
		return Tool{Problem: fmt.Sprintf("autonomy was built as part of %s, not from its own module %s, so no job can install it; install autonomy itself", i.Module, ModulePath)}
	}
	switch {
	case i.Commit != "" && !commitRe().MatchString(i.Commit):
		return Tool{Problem: fmt.Sprintf("autonomy names commit %q, which is not a full commit SHA; stamp the full SHA (git rev-parse HEAD)", i.Commit)}
	case i.Modified:
		return Tool{Problem: fmt.Sprintf("autonomy was built from commit %s with uncommitted changes, which no job can fetch; commit them (and push the commit where the jobs fetch it: policy.box.gh-actions.autonomy.repository), then rebuild autonomy", i.Commit)}
	case i.Release != "":
		return Tool{Release: i.Release, Repository: Repository, Commit: i.Commit}
	case i.Sum != "":
		return Tool{Module: ModulePath, Version: i.Version, Sum: i.Sum}
	case i.Commit != "":
		return Tool{Repository: Repository, Commit: i.Commit}
	}
	return Tool{Problem: "autonomy was built without a VCS stamp (go run, go test, -buildvcs=false, or outside a git clone: a git worktree is not stamped), so it names no commit a job could install; build it in a clean clone with go build -buildvcs=true -o bin/autonomy ./cmd/autonomy (make build), or install a release"}
}

// pinned is the Tool the jobs install once policy.box.gh-actions.autonomy is applied: a
// repository named there is built from source, at its ref or at the compiling build's commit.
func (c *compiler) pinned(t Tool) Tool {
	a := c.box.autonomy
	if a == nil {
		return t
	}
	own := t.Commit
	if t.Problem != "" && a.ref == "" {
		return t
	}
	pin := Tool{Repository: a.repository, Commit: a.ref}
	if pin.Repository == "" {
		pin.Repository = Repository
	}
	if pin.Commit == "" {
		pin.Commit = own
	}
	if pin.Commit == "" {
		return Tool{Problem: "policy.box.gh-actions.autonomy names no ref and the compiling autonomy names no commit (it was installed with go install module@version); set ref to the commit to build"}
	}
	if own != "" && own != pin.Commit && t.Problem == "" {
		c.warnf(a.pos, "compile with autonomy built from "+pin.Commit+", or set ref to "+own,
			"policy.box.gh-actions.autonomy: the jobs build commit %s, not commit %s this autonomy was built from, so they may read what this compile wrote differently", pin.Commit, own)
	}
	return pin
}

// installStepName names the step that installs autonomy in a trusted job.
const installStepName = "Install autonomy"

// installTail checks the binary runs and names it (AUTONOMY_BIN) for the steps after it.
const installTail = `"$RUNNER_TEMP/autonomy-bin/autonomy" version
echo "AUTONOMY_BIN=$RUNNER_TEMP/autonomy-bin/autonomy" >> "$GITHUB_ENV"
`

// sourceScript fetches the pinned commit (a commit's SHA is the hash of its content, which
// git checks as it receives it) and builds it, stamped with that commit.
const sourceScript = `src="$RUNNER_TEMP/autonomy-src"
git init --quiet "$src"
git -C "$src" fetch --quiet --depth 1 --no-tags -- "${AUTONOMY_REPOSITORY}" "${AUTONOMY_COMMIT}"
git -C "$src" -c advice.detachedHead=false checkout --quiet FETCH_HEAD
if [ "$(git -C "$src" rev-parse HEAD)" != "${AUTONOMY_COMMIT}" ]; then
  echo "::error::${AUTONOMY_REPOSITORY} served $(git -C "$src" rev-parse HEAD) for commit ${AUTONOMY_COMMIT}; refusing to run it"
  exit 1
fi
(cd "$src" && go build -trimpath -buildvcs=true -o "$RUNNER_TEMP/autonomy-bin/autonomy" ./cmd/autonomy)
` + installTail

// releaseScript downloads the release's linux binary for the runner's architecture and checks
// it against the release's checksums, then that it is the release (and commit) that compiled
// the workflow.
const releaseScript = `case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "::error::autonomy ${AUTONOMY_RELEASE} has no linux binary for $(uname -m)"; exit 1 ;;
esac
dir="$RUNNER_TEMP/autonomy-bin"
mkdir -p "$dir"
name="autonomy_${AUTONOMY_RELEASE#v}_linux_${arch}"
base="${AUTONOMY_REPOSITORY}/releases/download/${AUTONOMY_RELEASE}"
curl --fail --silent --show-error --location --retry 3 --output "$dir/checksums.txt" "$base/checksums.txt"
curl --fail --silent --show-error --location --retry 3 --output "$dir/$name" "$base/$name"
(cd "$dir" && awk -v n="$name" '$2 == n' checksums.txt | sha256sum --check --strict -)
chmod +x "$dir/$name"
v="$("$dir/$name" version)"
case "$v" in
  "autonomy ${AUTONOMY_RELEASE} (commit ${AUTONOMY_COMMIT}, "*) ;;
  *) echo "::error::${base}/${name} reports ${v}, not release ${AUTONOMY_RELEASE} (commit ${AUTONOMY_COMMIT}); refusing to run it"; exit 1 ;;
esac
mv "$dir/$name" "$dir/autonomy"
` + installTail

// moduleScript downloads the module zip, compares its checksum with the one compiled in
// (which stands in for the checksum database: the module is looked up in none), and only
// then builds it.
const moduleScript = `sum="$(go mod download -json "${AUTONOMY_MODULE}@${AUTONOMY_VERSION}" | jq -r .Sum)"
if [ "${sum}" != "${AUTONOMY_SUM}" ]; then
  echo "::error::${AUTONOMY_MODULE}@${AUTONOMY_VERSION} has checksum ${sum}, not the ${AUTONOMY_SUM} of the autonomy that compiled this workflow; refusing to run it"
  exit 1
fi
GOBIN="$RUNNER_TEMP/autonomy-bin" go install -trimpath "${AUTONOMY_MODULE}/cmd/autonomy@${AUTONOMY_VERSION}"
` + installTail

// problemScript fails the job: the workflow was compiled by an autonomy no job can install.
const problemScript = `echo "::error::this workflow cannot install the autonomy that compiled it: ${AUTONOMY_PROBLEM}"
exit 1
`

// toolStep installs autonomy in a trusted job; built once per compile.
func (c *compiler) toolStep() mapping {
	if c.toolInstall != nil {
		return c.toolInstall
	}
	t := c.tool
	var env mapping
	var script string
	switch {
	case t.Problem != "":
		env, script = mapping{{key: "AUTONOMY_PROBLEM", value: t.Problem}}, problemScript
	case t.Release != "":
		env = mapping{{key: "AUTONOMY_REPOSITORY", value: t.Repository}, {key: "AUTONOMY_RELEASE", value: t.Release}, {key: "AUTONOMY_COMMIT", value: t.Commit}}
		script = releaseScript
	case t.Sum != "":
		env = mapping{{key: "AUTONOMY_MODULE", value: t.Module}, {key: "AUTONOMY_VERSION", value: t.Version}, {key: "AUTONOMY_SUM", value: t.Sum},
			// The checksum above is the one that counts: the module is not looked up in the
			// checksum database (an unpublished version is not in it).
			{key: "GONOSUMDB", value: t.Module}}
		script = moduleScript
	default:
		env, script = mapping{{key: "AUTONOMY_REPOSITORY", value: t.Repository}, {key: "AUTONOMY_COMMIT", value: t.Commit}}, sourceScript
	}
	c.toolInstall = c.emit.sharedMap(mapping{{key: "name", value: installStepName}, {key: "env", value: env}, {key: "run", value: literal(script)}})
	return c.toolInstall
}

// installProblem is the blocker of an output whose jobs cannot install autonomy.
func (c *compiler) installProblem() ir.Diagnostics {
	if c.tool.Problem == "" {
		return nil
	}
	at := substrates.TargetPos(c.p, append([]string{Name}, Substrate{}.Aliases()...)...)
	if c.box.autonomy != nil {
		at = c.box.autonomy.pos
	}
	return ir.Diagnostics{{File: c.p.File, Pos: at, Severity: ir.Error,
		Message: "the gh-actions workflows' trusted jobs could not install this autonomy: " + c.tool.Problem,
		Hint:    "or name the commit to build in policy.box.gh-actions.autonomy: { repository: URL, ref: COMMIT }"}}
}
