package effect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// The installation a model job's MCP server and the apply job trust: the manifest and the policy
// as committed at the commit the run was triggered for (GITHUB_SHA), read from git's object
// store with git show, never from the working tree the model's job can edit.

// Paths of the installation, relative to its root.
const (
	manifestPath = ".autonomy/gh-actions/manifest.json"
	policyPath   = ".autonomy/policy.json"
	// maxInstalled bounds what is read of one of them.
	maxInstalled = 8 << 20
)

// ReadInstallation reads the manifest and the policy at commit sha of the repository checked
// out at dir.
func ReadInstallation(ctx context.Context, dir, sha string) (*Installed, Policy, error) {
	var pol Policy
	if sha == "" {
		return nil, pol, fmt.Errorf("GITHUB_SHA is not set: the installation is read at the commit the run was triggered for")
	}
	data, err := gitShow(ctx, dir, sha, manifestPath)
	if err != nil {
		return nil, pol, err
	}
	m, err := ReadInstalled(data)
	if err != nil {
		return nil, pol, fmt.Errorf("%s:%s: %v", sha, manifestPath, err)
	}
	data, err = gitShow(ctx, dir, sha, policyPath)
	if err != nil {
		return nil, pol, err
	}
	if err := json.Unmarshal(data, &pol); err != nil {
		return nil, pol, fmt.Errorf("%s:%s: %v", sha, policyPath, err)
	}
	return m, pol, nil
}

// gitShow returns the file at path in commit sha, bounded.
func gitShow(ctx context.Context, dir, sha, path string) ([]byte, error) {
	if strings.HasPrefix(sha, "-") {
		return nil, fmt.Errorf("GITHUB_SHA %q is not a commit", sha)
	}
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "show", sha+":"+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git show %s:%s: %v", sha, path, err)
	}
	data, rerr := io.ReadAll(io.LimitReader(out, maxInstalled+1))
	if len(data) > maxInstalled {
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	switch {
	case len(data) > maxInstalled:
		return nil, fmt.Errorf("%s:%s is larger than %d bytes", sha, path, maxInstalled)
	case rerr != nil:
		return nil, rerr
	case werr != nil:
		return nil, fmt.Errorf("git show %s:%s: %v: %s (is the installation committed at this commit?)", sha, path, werr, strings.TrimSpace(stderr.String()))
	}
	return data, nil
}

// WriteSummary writes the fate of each effect as a Markdown table (the apply job's step
// summary); staged says nothing was applied.
func WriteSummary(w io.Writer, actor string, staged bool, out []Applied) error {
	var b strings.Builder
	title := "Safe outputs of " + actor
	if staged {
		title += " (staged: nothing was applied)"
	}
	fmt.Fprintf(&b, "### %s\n\n", title)
	if len(out) == 0 {
		b.WriteString("The session asked for no effect.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("| # | tool | outcome |\n|---|---|---|\n")
	for i, a := range out {
		outcome := a.Outcome
		if a.Refused != "" {
			outcome = "**refused**: " + a.Refused
		}
		fmt.Fprintf(&b, "| %d | %s | %s |\n", i+1, cell(a.Effect.Tool), cell(outcome))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell makes a text one Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}
