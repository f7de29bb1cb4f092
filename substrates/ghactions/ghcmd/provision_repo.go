package ghcmd

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/gitremote"
)

// inferRepo reads OWNER/NAME from the git remote origin of the repository in the current
// directory, for provision without --repo.
func inferRepo(ctx context.Context, anyHost bool) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "remote", "get-url", "origin").Output()
	if err != nil {
		return "", fmt.Errorf("no --repo, and no git remote origin here to read it from: pass --repo OWNER/NAME")
	}
	r, ok := gitremote.Parse(string(out))
	if !ok || !anyHost && !r.OnGitHub() {
		return "", fmt.Errorf("no --repo, and the git remote origin (%s) is not a GitHub repository: pass --repo OWNER/NAME", strings.TrimSpace(string(out)))
	}
	return r.Repo(), nil
}
