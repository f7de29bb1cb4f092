package modelfake

import (
	"fmt"
	"os"
	"path/filepath"
)

// Env is the variables that point the runner (and the agent CLIs) at the server, as KEY=VALUE
// lines, each ending in a newline: OPENAI_BASE_URL, then ANTHROPIC_BASE_URL.
func (s *Server) Env() string {
	return fmt.Sprintf("OPENAI_BASE_URL=%s\nANTHROPIC_BASE_URL=%s\n", s.OpenAIBaseURL(), s.AnthropicBaseURL())
}

// WriteEnvFile writes Env to path at once (a file beside it renamed over it), so that a reader
// never sees half of it: when path exists, the server is serving at the address it names.
func (s *Server) WriteEnvFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing to remove
	if _, err := tmp.WriteString(s.Env()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
