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

func (s *Server) routeGit(w http.ResponseWriter, req *http.Request, rest []string) bool {
	if len(rest) < 2 || rest[0] != "git" || s.opts.GitDir == "" {
		return false
	}
	m := req.Method
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(rest) == 2 && rest[1] == "blobs" && m == http.MethodPost:
		var body struct{ Content, Encoding string }
		if !readBody(w, req, &body, docsGit+"/blobs#create-a-blob") {
			return true
		}
		data := []byte(body.Content)
		if body.Encoding == "base64" {
			var err error
			if data, err = base64.StdEncoding.DecodeString(body.Content); err != nil {
				validation(w, "Blob", "content", "invalid", "", docsGit+"/blobs#create-a-blob")
				return true
			}
		}
		sha, err := s.gitOut(data, nil, "hash-object", "-w", "--stdin")
		if err != nil {
			writeError(w, http.StatusInternalServerError, "ghfake: "+err.Error(), docsGit)
			return true
		}
		writeJSON(w, http.StatusCreated, map[string]any{"sha": sha})
	case len(rest) == 3 && rest[1] == "commits" && m == http.MethodGet:
		tree, err := s.gitOut(nil, nil, "rev-parse", "--verify", rest[2]+"^{tree}")
		if err != nil {
			writeError(w, http.StatusNotFound, "Not Found", docsGit+"/commits#get-a-commit-object")
			return true
		}
		msg, _ := s.gitOut(nil, nil, "log", "-1", "--format=%B", rest[2])
		writeJSON(w, http.StatusOK, map[string]any{"sha": rest[2], "tree": map[string]string{"sha": tree}, "message": msg,
			"verification": map[string]any{"verified": s.verified[rest[2]]}})
	case len(rest) == 2 && rest[1] == "trees" && m == http.MethodPost:
		var body struct {
			BaseTree string `json:"base_tree"`
			Tree     []struct {
				Path, Mode, Type string
				SHA              *string
			}
		}
		if !readBody(w, req, &body, docsGit+"/trees#create-a-tree") {
			return true
		}
		dir, err := os.MkdirTemp("", "ghfake-index-")
		if err != nil {
			writeError(w, http.StatusInternalServerError, "ghfake: "+err.Error(), docsGit)
			return true
		}
		defer os.RemoveAll(dir)
		env := []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "index")}
		if body.BaseTree != "" {
			if _, err := s.gitOut(nil, env, "read-tree", body.BaseTree); err != nil {
				validation(w, "Tree", "base_tree", "invalid", "base_tree is not a valid tree oid", docsGit+"/trees#create-a-tree")
				return true
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
				return true
			}
		}
		sha, err := s.gitOut(nil, env, "write-tree")
		if err != nil {
			writeError(w, http.StatusInternalServerError, "ghfake: "+err.Error(), docsGit)
			return true
		}
		writeJSON(w, http.StatusCreated, map[string]any{"sha": sha})
	case len(rest) == 2 && rest[1] == "commits" && m == http.MethodPost:
		var body struct {
			Message, Tree string
			Parents       []string
			Author        *struct{ Name, Email, Date string }
		}
		if !readBody(w, req, &body, docsGit+"/commits#create-a-commit") {
			return true
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
			return true
		}
		if s.verified == nil {
			s.verified = map[string]bool{}
		}
		s.verified[sha] = true
		writeJSON(w, http.StatusCreated, map[string]any{"sha": sha, "tree": map[string]string{"sha": body.Tree}, "message": body.Message,
			"verification": map[string]any{"verified": true, "reason": "valid"}})
	case len(rest) >= 4 && rest[1] == "ref" && m == http.MethodGet:
		ref := "refs/" + strings.Join(rest[2:], "/")
		sha, err := s.gitOut(nil, nil, "rev-parse", "--verify", "--quiet", ref)
		if err != nil {
			writeError(w, http.StatusNotFound, "Not Found", docsGit+"/refs#get-a-reference")
			return true
		}
		writeJSON(w, http.StatusOK, map[string]any{"ref": ref, "object": map[string]string{"sha": sha, "type": "commit"}})
	case len(rest) == 2 && rest[1] == "refs" && m == http.MethodPost:
		var body struct{ Ref, SHA string }
		if !readBody(w, req, &body, docsGit+"/refs#create-a-reference") {
			return true
		}
		if _, err := s.gitOut(nil, nil, "rev-parse", "--verify", "--quiet", body.Ref); err == nil {
			validation(w, "Reference", "", "custom", "Reference already exists", docsGit+"/refs#create-a-reference")
			return true
		}
		if _, err := s.gitOut(nil, nil, "update-ref", body.Ref, body.SHA); err != nil {
			validation(w, "Reference", "sha", "custom", "Object does not exist", docsGit+"/refs#create-a-reference")
			return true
		}
		writeJSON(w, http.StatusCreated, map[string]any{"ref": body.Ref, "object": map[string]string{"sha": body.SHA, "type": "commit"}})
	case len(rest) >= 4 && rest[1] == "refs" && m == http.MethodPatch:
		ref := "refs/" + strings.Join(rest[2:], "/")
		var body struct {
			SHA   string
			Force bool
		}
		if !readBody(w, req, &body, docsGit+"/refs#update-a-reference") {
			return true
		}
		old, err := s.gitOut(nil, nil, "rev-parse", "--verify", "--quiet", ref)
		if err != nil {
			validation(w, "Reference", "", "custom", "Reference does not exist", docsGit+"/refs#update-a-reference")
			return true
		}
		if !body.Force {
			if _, err := s.gitOut(nil, nil, "merge-base", "--is-ancestor", old, body.SHA); err != nil {
				validation(w, "Reference", "", "custom", "Update is not a fast forward", docsGit+"/refs#update-a-reference")
				return true
			}
		}
		if _, err := s.gitOut(nil, nil, "update-ref", ref, body.SHA); err != nil {
			validation(w, "Reference", "sha", "custom", "Object does not exist", docsGit+"/refs#update-a-reference")
			return true
		}
		writeJSON(w, http.StatusOK, map[string]any{"ref": ref, "object": map[string]string{"sha": body.SHA, "type": "commit"}})
	default:
		return false
	}
	return true
}
