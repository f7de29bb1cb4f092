package effect

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// SigningVerifiedAPI is policy.box.gh-actions.commit_signing's value for commits created through
// the Git Data API, which GitHub signs (they show as Verified).
const SigningVerifiedAPI = "verified-api"

// pushSigned recreates the commits base..head through the Git Data API, one by one with the same
// trees, messages and authors, and points the branch at the last: GitHub signs each commit it
// creates. base must be on GitHub already (the default branch's head). It returns the new head.
func (e *Env) pushSigned(ctx context.Context, base, head, branch string) (string, error) {
	list, err := e.git("rev-list", "--reverse", base+".."+head)
	if err != nil {
		return "", err
	}
	parent := base
	for _, c := range strings.Fields(list) {
		pc, _, err := e.Client.Git.GetCommit(ctx, e.Owner, e.Repo, parent)
		if err != nil {
			return "", fmt.Errorf("reading commit %s: %w", parent, err)
		}
		raw, err := e.git("diff-tree", "-r", "--no-renames", "--no-commit-id", "-z", c+"^", c)
		if err != nil {
			return "", err
		}
		var entries []*github.TreeEntry
		fields := strings.Split(strings.TrimSuffix(raw, "\x00"), "\x00")
		for i := 0; i+1 < len(fields); i += 2 {
			// ":oldmode newmode oldsha newsha status", then the path.
			meta, path := strings.Fields(strings.TrimPrefix(fields[i], ":")), fields[i+1]
			if len(meta) != 5 {
				return "", fmt.Errorf("git diff-tree: unexpected %q", fields[i])
			}
			if meta[4] == "D" {
				entries = append(entries, &github.TreeEntry{Path: github.String(path), Mode: github.String(meta[0]), Type: github.String("blob")})
				continue
			}
			if meta[1] == "160000" {
				return "", fmt.Errorf("%s is a submodule, which commit_signing: verified-api cannot recreate", path)
			}
			content, err := e.gitBytes("cat-file", "blob", meta[3])
			if err != nil {
				return "", err
			}
			blob, _, err := e.Client.Git.CreateBlob(ctx, e.Owner, e.Repo, &github.Blob{
				Content: github.String(base64.StdEncoding.EncodeToString(content)), Encoding: github.String("base64")})
			if err != nil {
				return "", fmt.Errorf("creating the blob of %s: %w", path, err)
			}
			entries = append(entries, &github.TreeEntry{Path: github.String(path), Mode: github.String(meta[1]), Type: github.String("blob"), SHA: blob.SHA})
		}
		tree, _, err := e.Client.Git.CreateTree(ctx, e.Owner, e.Repo, pc.GetTree().GetSHA(), entries)
		if err != nil {
			return "", fmt.Errorf("creating the tree of %s: %w", c, err)
		}
		info, err := e.git("log", "-1", "--format=%an%x00%ae%x00%aI%x00%B", c)
		if err != nil {
			return "", err
		}
		parts := strings.SplitN(info, "\x00", 4)
		when, _ := time.Parse(time.RFC3339, parts[2])
		nc, _, err := e.Client.Git.CreateCommit(ctx, e.Owner, e.Repo, &github.Commit{
			Message: github.String(strings.TrimSpace(parts[3])), Tree: &github.Tree{SHA: tree.SHA},
			Parents: []*github.Commit{{SHA: github.String(parent)}},
			Author:  &github.CommitAuthor{Name: github.String(parts[0]), Email: github.String(parts[1]), Date: &github.Timestamp{Time: when}},
		}, nil)
		if err != nil {
			return "", fmt.Errorf("creating commit %s: %w", c, err)
		}
		parent = nc.GetSHA()
	}
	ref := &github.Reference{Ref: github.String("refs/heads/" + branch), Object: &github.GitObject{SHA: github.String(parent)}}
	if _, resp, err := e.Client.Git.GetRef(ctx, e.Owner, e.Repo, "heads/"+branch); err == nil {
		_, _, err = e.Client.Git.UpdateRef(ctx, e.Owner, e.Repo, ref, true)
		if err != nil {
			return "", fmt.Errorf("moving %s: %w", branch, err)
		}
	} else if resp != nil && resp.StatusCode == 404 {
		if _, _, err := e.Client.Git.CreateRef(ctx, e.Owner, e.Repo, ref); err != nil {
			return "", fmt.Errorf("creating %s: %w", branch, err)
		}
	} else {
		return "", fmt.Errorf("reading %s: %w", branch, err)
	}
	return parent, nil
}
