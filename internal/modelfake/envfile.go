package modelfake

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Env is the variables that point the runner (and the agent CLIs) at the server, as KEY=VALUE
// lines, each ending in a newline: OPENAI_BASE_URL, then ANTHROPIC_BASE_URL.
func (s *Server) Env() string {
	return fmt.Sprintf("OPENAI_BASE_URL=%s\nANTHROPIC_BASE_URL=%s\n", s.OpenAIBaseURL(), s.AnthropicBaseURL())
}

// WriteEnvFile writes Env to path at once (a file beside it renamed over it), so that a reader
// never sees half of it: when path exists, the server is serving at the address it names.
// A file there already is replaced only when it is a dev model's, whose server is gone (killed):
// one whose address answers is another's, serving, and any other file is the user's (a .env
// with keys in it, say): both are refused, left as they are.
func (s *Server) WriteEnvFile(path string) error {
	if host, ours, err := envFileAt(path); err != nil {
		return err
	} else if host != "" && !ours {
		return fmt.Errorf("%s is there and is not an env file of autonomy dev model: give another path (it is left as it is)", path)
	} else if host != "" && answers(host) {
		return fmt.Errorf("%s names a model serving at %s (another autonomy dev model, or another program listening there): give this one another file, or stop that one first", path, host)
	}
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

// RemoveEnvFile removes the file WriteEnvFile wrote at path, unless it holds another's by now.
func (s *Server) RemoveEnvFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	f.Close()
	if err != nil {
		return err
	}
	if !bytes.Equal(data, []byte(s.Env())) {
		return nil // another's now
	}
	return os.Remove(path)
}

// envFileAt reads the file at path: host is "" when there is none, else its OPENAI_BASE_URL's
// host:port ("-" when it names none); ours says it is an env file as Env writes them, naming a
// loopback address.
func envFileAt(path string) (host string, ours bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil {
		return "", false, fmt.Errorf("%s: %v", path, err)
	}
	lines := strings.Split(string(data), "\n")
	if len(data) > 4096 || len(lines) != 3 || lines[2] != "" {
		return "-", false, nil
	}
	openai, ok1 := strings.CutPrefix(lines[0], "OPENAI_BASE_URL=")
	anthropic, ok2 := strings.CutPrefix(lines[1], "ANTHROPIC_BASE_URL=")
	u, err := url.Parse(anthropic)
	if !ok1 || !ok2 || err != nil || u.Scheme != "http" || u.Path != "" || openai != anthropic+"/v1" {
		return "-", false, nil
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return "-", false, nil
	}
	return u.Host, true, nil
}

// answers reports whether something listens at host:port.
func answers(host string) bool {
	c, err := net.DialTimeout("tcp", host, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
