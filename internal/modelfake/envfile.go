package modelfake

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
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
// A file there already that names a server answering at its address is another's, serving:
// refused, left as it is. One whose server is gone (killed) is replaced.
func (s *Server) WriteEnvFile(path string) error {
	if addr := servedBy(path); addr != "" {
		return fmt.Errorf("%s names a model serving at %s (another autonomy dev model): give this one another file, or stop that one first", path, addr)
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

// servedBy is the host:port the env file at path names when something listens there ("" when
// there is no such file, it names no loopback address, or nothing answers: a server killed).
func servedBy(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 4096))
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "OPENAI_BASE_URL=")
		if !ok {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || u.Host == "" {
			return ""
		}
		if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
			return ""
		}
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			return ""
		}
		c.Close()
		return u.Host
	}
	return ""
}
