package ghfake

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Auto-merge as GitHub runs it, with Options.AutoMergeMerges: "If you enable auto-merge for a
// pull request, the pull request will merge automatically when all required reviews are met
// and all required status checks have passed" (docs.github.com/pull-requests: automatically
// merging a pull request). The fake looks after every status it records: an open pull request
// with auto-merge armed that Mergeable allows merges into its base with its auto-merge's method,
// by the user who armed it (the job token's github-actions[bot], or the person whose token armed
// it); its state becomes closed, the repository's issue events record it merged (with the commit
// that landed) and closed, by the merger, and its head branch is deleted when the repository
// deletes branches on merge. A head up to date
// with its base lands as it is: squash makes one commit of the head's tree on the base, merge a
// merge commit of both, rebase moves the base to the head. A head behind its base (which only a
// protection that is not strict lets through) lands as GitHub's 3-way merge of the two: the
// tree git merge-tree makes of base and head (following renames), in one commit on the base for
// squash and rebase (GitHub replays each commit for rebase; the fake writes their sum) or a
// merge commit of both; a conflict leaves it open (mergeable).

// autoMerge merges every pull request auto-merge would merge now; the caller holds mu.
func (s *Server) autoMerge() {
	if !s.opts.AutoMergeMerges {
		return
	}
	for _, is := range s.issues {
		if is.PR && is.State == "open" && is.AutoMerge {
			if ok, _ := s.mergeable(is); ok {
				s.merge(is, is.AutoMergeBy)
			}
		}
	}
}

// merge merges is into its base as by ("" for github-actions[bot]); the caller holds mu. A head
// that conflicts with its base, or a git failure, leaves it open.
func (s *Server) merge(is *Issue, by string) {
	head, base := s.headSHA(is), s.sha(is.Base)
	if head == "" || base == "" {
		return
	}
	tree, behind := head+"^{tree}", s.git("merge-base", "--is-ancestor", base, head) != nil
	if behind {
		if tree = s.mergeTree(base, head); tree == "" {
			return
		}
	}
	commit := head
	switch {
	case is.AutoMergeMethod == "merge":
		commit = s.commitTree(tree, "Merge pull request from "+s.headOwner(is)+":"+is.Head, base, head)
	case is.AutoMergeMethod == "squash" || behind:
		commit = s.commitTree(tree, is.Title, base)
	}
	if commit == "" || s.git("update-ref", "refs/heads/"+is.Base, commit, base) != nil {
		return
	}
	is.State, is.Merged, is.MergedBy, is.MergeCommit, is.MergedHead = "closed", true, loginOrBot(by), commit, head
	// GitHub's timeline of a merge: merged (its commit_id the commit that landed), then closed.
	s.recordCommitEvent(is.Number, "merged", by, commit)
	s.recordIssueEvent(is.Number, "closed", by, "")
	if s.settings.DeleteBranchOnMerge && is.HeadOwner == "" { // a fork's branch is not the repository's to delete
		_ = s.git("update-ref", "-d", "refs/heads/"+is.Head, head)
	}
}

// mergeTree is the tree of git's 3-way merge of base and head ("" when they conflict or git
// fails), as GitHub merges a head behind its base.
func (s *Server) mergeTree(base, head string) string {
	out, err := exec.Command("git", "--git-dir", s.opts.GitDir, "merge-tree", "--write-tree", "--no-messages", base, head).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// commitTree writes a commit of tree with parents, as GitHub's web-flow commits ("" on error).
func (s *Server) commitTree(tree, msg string, parents ...string) string {
	args := []string{"--git-dir", s.opts.GitDir, "commit-tree", tree, "-m", msg}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=GitHub", "GIT_AUTHOR_EMAIL=noreply@github.com",
		"GIT_COMMITTER_NAME=GitHub", "GIT_COMMITTER_EMAIL=noreply@github.com")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// mergedJSON sets what a pull request says of its merge: merged, and once merged its
// merged_by, merge_commit_sha and the head it merged (its branch may be gone).
func mergedJSON(is *Issue, out *issueJSON) {
	merged := is.Merged
	out.Merged = &merged
	if !is.Merged {
		return
	}
	out.MergedBy, out.MergeCommitSHA = &userJSON{is.MergedBy}, is.MergeCommit
	if out.Head != nil {
		out.Head.SHA = is.MergedHead
	}
}

// DisableAutoMerge disarms auto-merge on pull request n, as a person does on GitHub (or the
// GraphQL disablePullRequestAutoMerge): its auto_merge reads null again.
func (s *Server) DisableAutoMerge(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.issues[n]; is != nil && is.PR {
		is.AutoMerge, is.AutoMergeMethod, is.AutoMergeBy = false, "", ""
	}
}

// MergeArmed merges open pull request n as its armed auto-merge does once Mergeable allows it:
// with its auto-merge's method, by the user who armed it. It says why when auto-merge would not
// merge it now (not armed, its protection, a conflict). Options.AutoMergeMerges merges so after
// each status; this is that merge at a moment a test chooses.
func (s *Server) MergeArmed(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	switch {
	case is == nil || !is.PR || is.State != "open":
		return fmt.Errorf("ghfake: no open pull request #%d", n)
	case !is.AutoMerge:
		return fmt.Errorf("ghfake: auto-merge is not armed on pull request #%d", n)
	}
	if ok, why := s.mergeable(is); !ok {
		return fmt.Errorf("ghfake: pull request #%d is not mergeable: %s", n, why)
	}
	if s.merge(is, is.AutoMergeBy); !is.Merged {
		return fmt.Errorf("ghfake: pull request #%d did not merge: its head conflicts with %s", n, is.Base)
	}
	return nil
}

// MergePull merges open pull request n with method (merge, squash or rebase), as the person login
// pressing the merge button does once its base's protection is satisfied: it says why when
// GitHub would not (its protection, or a head not up to date with its base). Merged, the pull
// request is closed, reads its head at the merge as head.sha, the commit that landed as
// merge_commit_sha and login as merged_by, and the issue events record it merged and closed by
// login.
func (s *Server) MergePull(n int, login, method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil || !is.PR || is.State != "open" {
		return fmt.Errorf("ghfake: no open pull request #%d", n)
	}
	if ok, why := s.mergeable(is); !ok {
		return fmt.Errorf("ghfake: pull request #%d is not mergeable: %s", n, why)
	}
	was := is.AutoMergeMethod
	is.AutoMergeMethod = method
	s.merge(is, login)
	is.AutoMergeMethod = was
	if !is.Merged {
		return fmt.Errorf("ghfake: pull request #%d did not merge: its head conflicts with %s", n, is.Base)
	}
	return nil
}
