package ghfake

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The Git Data API over the bare repository (docs.github.com/rest/git): blobs, trees, commits
// and refs. A commit created through it is signed by GitHub: the fake marks it verified.

const docsGit = "https://docs.github.com/rest/git"

// Verified reports whether commit sha was created through the Git Data API (signed by GitHub).
func (s *Server) Verified(sha string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.verified[sha]
}

// gitOut runs git on the bare repository with stdin and extra env; the caller holds mu.
func (s *Server) gitOut(stdin []byte, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", s.opts.GitDir}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// gitRoute is codeRoute for the Git Data API: h answers only with Options.GitDir, and holds mu.
func (s *Server) gitRoute(m *http.ServeMux, pattern string, h http.HandlerFunc) {
	s.codeRoute(m, pattern, func(w http.ResponseWriter, req *http.Request) {
		if s.opts.GitDir == "" {
			s.notFound(w, req)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		h(w, req)
	})
}

// gitRoutes registers the Git Data API. A ref's name may hold slashes (heads/feature/x): its
// patterns end in a {ref...} remainder of two segments at least; /git/ref and /git/refs alone
// are registered as not found so that the mux does not redirect them to their trailing slash.
func (s *Server) gitRoutes(m *http.ServeMux) {
	s.gitRoute(m, "POST /git/blobs", s.createBlob)
	s.gitRoute(m, "GET /git/commits/{sha}", s.getCommit)
	s.gitRoute(m, "POST /git/trees", s.createTree)
	s.gitRoute(m, "POST /git/commits", s.createCommit)
	s.gitRoute(m, "GET /git/ref/{ref...}", s.getRef)
	s.gitRoute(m, "POST /git/refs", s.createRef)
	s.gitRoute(m, "PATCH /git/refs/{ref...}", s.updateRef)
	s.codeRoute(m, "/git/ref", s.notFound)
	s.codeRoute(m, "/git/refs", s.notFound)
}

// fullRef is refs/{ref...} for a ref of two segments at least (heads/main), or "" after
// answering 404.
func (s *Server) fullRef(w http.ResponseWriter, req *http.Request) string {
	ref := req.PathValue("ref")
	if !strings.Contains(ref, "/") {
		s.notFound(w, req)
		return ""
	}
	return "refs/" + ref
}

// createBlob serves POST .../git/blobs.
func (s *Server) createBlob(w http.ResponseWriter, req *http.Request) {
	var body struct{ Content, Encoding string }
	if !readBody(w, req, &body, docsGit+"/blobs#create-a-blob") {
		return
	}
	data := []byte(body.Content)
	if body.Encoding == "base64" {
		var err error
		if data, err = base64.StdEncoding.DecodeString(body.Content); err != nil {
			validation(w, "Blob", "content", "invalid", "", docsGit+"/blobs#create-a-blob")
			return
		}
	}
	sha, err := s.gitOut(data, nil, "hash-object", "-w", "--stdin")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "ghfake: "+err.Error(), docsGit)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha})
}

// getCommit serves GET .../git/commits/{sha}.
func (s *Server) getCommit(w http.ResponseWriter, req *http.Request) {
	sha := req.PathValue("sha")
	tree, err := s.gitOut(nil, nil, "rev-parse", "--verify", sha+"^{tree}")
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found", docsGit+"/commits#get-a-commit-object")
		return
	}
	msg, _ := s.gitOut(nil, nil, "log", "-1", "--format=%B", sha)
	writeJSON(w, http.StatusOK, map[string]any{"sha": sha, "tree": map[string]string{"sha": tree}, "message": msg,
		"verification": map[string]any{"verified": s.verified[sha]}})
}

// createTree serves POST .../git/trees.
func (s *Server) createTree(w http.ResponseWriter, req *http.Request) {
	var body struct {
		BaseTree string `json:"base_tree"`
		Tree     []struct {
			Path, Mode, Type string
			SHA              *string
		}
	}
	if !readBody(w, req, &body, docsGit+"/trees#create-a-tree") {
		return
	}
	dir, err := os.MkdirTemp("", "ghfake-index-")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "ghfake: "+err.Error(), docsGit)
		return
	}
	defer os.RemoveAll(dir)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "index")}
	if body.BaseTree != "" {
		if _, err := s.gitOut(nil, env, "read-tree", body.BaseTree); err != nil {
			validation(w, "Tree", "base_tree", "invalid", "base_tree is not a valid tree oid", docsGit+"/trees#create-a-tree")
			return
		}
	}
	for _, e := range body.Tree {
		var err error
		if e.SHA == nil {
			// Mode 0 removes the path (--force-remove wants a work tree; this is a bare repository).
			_, err = s.gitOut([]byte("0 "+strings.Repeat("0", 40)+"\t"+e.Path+"\n"), env, "update-index", "--index-info")
		} else {
			_, err = s.gitOut(nil, env, "update-index", "--add", "--cacheinfo", e.Mode+","+*e.SHA+","+e.Path)
		}
		if err != nil {
			validation(w, "Tree", "tree.sha", "invalid", "tree.sha "+e.Path+" is not a valid blob", docsGit+"/trees#create-a-tree")
			return
		}
	}
	sha, err := s.gitOut(nil, env, "write-tree")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "ghfake: "+err.Error(), docsGit)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha})
}

// createCommit serves POST .../git/commits: the commit is signed by GitHub (verified).
func (s *Server) createCommit(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Message, Tree string
		Parents       []string
		Author        *struct{ Name, Email, Date string }
	}
	if !readBody(w, req, &body, docsGit+"/commits#create-a-commit") {
		return
	}
	args := []string{"commit-tree", body.Tree}
	for _, p := range body.Parents {
		args = append(args, "-p", p)
	}
	env := []string{"GIT_COMMITTER_NAME=GitHub", "GIT_COMMITTER_EMAIL=noreply@github.com", "GIT_AUTHOR_NAME=github-actions[bot]", "GIT_AUTHOR_EMAIL=41898282+github-actions[bot]@users.noreply.github.com"}
	if a := body.Author; a != nil {
		env = append(env, "GIT_AUTHOR_NAME="+a.Name, "GIT_AUTHOR_EMAIL="+a.Email, "GIT_AUTHOR_DATE="+a.Date)
	}
	sha, err := s.gitOut([]byte(body.Message), env, args...)
	if err != nil {
		validation(w, "Commit", "tree", "invalid", "Tree SHA does not exist or a parent SHA does not exist", docsGit+"/commits#create-a-commit")
		return
	}
	if s.verified == nil {
		s.verified = map[string]bool{}
	}
	s.verified[sha] = true
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha, "tree": map[string]string{"sha": body.Tree}, "message": body.Message,
		"verification": map[string]any{"verified": true, "reason": "valid"}})
}

// getRef serves GET .../git/ref/{ref...}.
func (s *Server) getRef(w http.ResponseWriter, req *http.Request) {
	ref := s.fullRef(w, req)
	if ref == "" {
		return
	}
	sha, err := s.gitOut(nil, nil, "rev-parse", "--verify", "--quiet", ref)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found", docsGit+"/refs#get-a-reference")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ref": ref, "object": map[string]string{"sha": sha, "type": "commit"}})
}

// createRef serves POST .../git/refs.
func (s *Server) createRef(w http.ResponseWriter, req *http.Request) {
	var body struct{ Ref, SHA string }
	if !readBody(w, req, &body, docsGit+"/refs#create-a-reference") {
		return
	}
	if _, err := s.gitOut(nil, nil, "rev-parse", "--verify", "--quiet", body.Ref); err == nil {
		validation(w, "Reference", "", "custom", "Reference already exists", docsGit+"/refs#create-a-reference")
		return
	}
	if _, err := s.gitOut(nil, nil, "update-ref", body.Ref, body.SHA); err != nil {
		validation(w, "Reference", "sha", "custom", "Object does not exist", docsGit+"/refs#create-a-reference")
		return
	}
	s.pullRefs()
	writeJSON(w, http.StatusCreated, map[string]any{"ref": body.Ref, "object": map[string]string{"sha": body.SHA, "type": "commit"}})
}

// updateRef serves PATCH .../git/refs/{ref...}: a fast forward unless forced.
func (s *Server) updateRef(w http.ResponseWriter, req *http.Request) {
	ref := s.fullRef(w, req)
	if ref == "" {
		return
	}
	var body struct {
		SHA   string
		Force bool
	}
	if !readBody(w, req, &body, docsGit+"/refs#update-a-reference") {
		return
	}
	old, err := s.gitOut(nil, nil, "rev-parse", "--verify", "--quiet", ref)
	if err != nil {
		validation(w, "Reference", "", "custom", "Reference does not exist", docsGit+"/refs#update-a-reference")
		return
	}
	if !body.Force {
		if _, err := s.gitOut(nil, nil, "merge-base", "--is-ancestor", old, body.SHA); err != nil {
			validation(w, "Reference", "", "custom", "Update is not a fast forward", docsGit+"/refs#update-a-reference")
			return
		}
	}
	if _, err := s.gitOut(nil, nil, "update-ref", ref, body.SHA); err != nil {
		validation(w, "Reference", "sha", "custom", "Object does not exist", docsGit+"/refs#update-a-reference")
		return
	}
	s.pullRefs()
	writeJSON(w, http.StatusOK, map[string]any{"ref": ref, "object": map[string]string{"sha": body.SHA, "type": "commit"}})
}
