package ghfake

import (
	"fmt"
	"strings"
)

// Forks: a pull request may come from another owner's fork of the repository. GitHub's create
// takes head as "username:branch" for such a cross-repository pull request, and its pull request
// object then names the fork: head.repo is the fork's repository (fork: true) and head.label is
// "username:branch" (docs.github.com/rest/pulls/pulls#create-a-pull-request). A fork shares its
// parent's objects on GitHub; the fake keeps a fork's branches in the bare repository under
// ForkRef, where a test pushes them.

// ForkRef is the ref of the bare repository that holds branch of owner's fork: push a commit
// there to put it on the fork's branch.
func ForkRef(owner, branch string) string {
	return "refs/forks/" + owner + "/heads/" + branch
}

// OpenForkPull opens a pull request from branch of login's fork (pushed to ForkRef(login,
// branch)) into base as login, and returns its number.
func (s *Server) OpenForkPull(login, title, branch, base string) (int, error) {
	return s.OpenForkPullBy(login, login, title, branch, base)
}

// OpenForkPullBy opens a pull request from branch of owner's fork into base as author (GitHub
// lets anyone open one from any fork they can read, while the fork's owner keeps pushing its
// head), and returns its number.
func (s *Server) OpenForkPullBy(author, owner, title, branch, base string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := &Issue{Title: title, State: "open", PR: true, Head: branch, HeadOwner: owner, Base: base}
	if s.headSHA(is) == "" || s.sha(base) == "" {
		return 0, fmt.Errorf("ghfake: no branch %s of %s's fork, or no branch %s", branch, owner, base)
	}
	n := s.newIssue(is)
	if s.issueBy == nil {
		s.issueBy = map[int]string{}
	}
	s.issueBy[n] = author
	return n, nil
}

// splitHead parses create's head: "branch" or "username:branch"; a username that is the
// repository's owner names the repository itself (owner ""), as on GitHub.
func (s *Server) splitHead(head string) (owner, branch string) {
	if o, b, ok := strings.Cut(head, ":"); ok {
		if strings.EqualFold(o, s.opts.Owner) {
			return "", b
		}
		return o, b
	}
	return "", head
}

// headSHA is the commit of is's head branch, in the repository or in its fork ("" when the
// branch is gone); the caller holds mu.
func (s *Server) headSHA(is *Issue) string {
	if is.HeadOwner == "" {
		return s.sha(is.Head)
	}
	return s.refSHA(ForkRef(is.HeadOwner, is.Head))
}

// headOwner is the login owning is's head repository.
func (s *Server) headOwner(is *Issue) string {
	if is.HeadOwner == "" {
		return s.opts.Owner
	}
	return is.HeadOwner
}

// headRef is is's head as GitHub renders it: its label names the head repository's owner, and
// its repo is the fork for a pull request from one.
func (s *Server) headRef(is *Issue) *refJSON {
	repo := s.repoJSON()
	if is.HeadOwner != "" {
		full := is.HeadOwner + "/" + s.opts.Repo
		repo = repoJSON{ID: 800_000_001, Name: s.opts.Repo, FullName: full, Owner: ownerJSON{Login: is.HeadOwner, ID: 9_002, Type: "User"},
			HTMLURL: "https://github.com/" + full, DefaultBranch: s.opts.DefaultBranch, Fork: true}
	}
	return &refJSON{Ref: is.Head, SHA: s.headSHA(is), Label: s.headOwner(is) + ":" + is.Head, Repo: repo}
}

// headMatches reports whether list's head filter ("user:ref-name") names is's head.
func (s *Server) headMatches(is *Issue, filter string) bool {
	o, b, ok := strings.Cut(filter, ":")
	return ok && strings.EqualFold(o, s.headOwner(is)) && b == is.Head
}
