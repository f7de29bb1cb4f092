//go:build unix

package modelfake

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestWriteEnvFile: on a port the system picked, the file names the server's address (one can
// connect to it) in both variables, and replaces whole an older one of a dev model that is gone;
// a file of anyone else's is refused and left as it is.
func TestWriteEnvFile(t *testing.T) {
	s, err := Listen("127.0.0.1:0", DefaultScript, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old := goneEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "model.env")
	mine := "OPENAI_BASE_URL=http://127.0.0.1:4000/v1\nSTALE=1\n"
	if err := os.WriteFile(path, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteEnvFile(path); err == nil || !strings.Contains(err.Error(), "is not an env file of autonomy dev model") {
		t.Fatalf("a file of the user's: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != mine {
		t.Fatalf("a file of the user's is now %q", data)
	}
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteEnvFile(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("not KEY=VALUE: %q", line)
		}
		vars[k] = v
	}
	if len(vars) != 2 || vars["OPENAI_BASE_URL"] != vars["ANTHROPIC_BASE_URL"]+"/v1" {
		t.Fatalf("env file:\n%s", data)
	}
	u, err := url.Parse(vars["ANTHROPIC_BASE_URL"])
	if err != nil || u.Port() == "0" || u.Port() == "" {
		t.Fatalf("base URL %q: %v", vars["ANTHROPIC_BASE_URL"], err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatalf("the file's address does not reach the server: %v", err)
	}
	c.Close()
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".model.env.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := s.WriteEnvFile(filepath.Join(t.TempDir(), "no", "such", "dir", "model.env")); err == nil {
		t.Error("a file in a missing directory: no error")
	}
}

// goneEnv is the env file of a dev model that is gone: its address is a port bound, not
// listening, to the end of the test, so that it answers nothing and no other process takes it
// meanwhile (CI28: a closed server's port was taken at once, and the address answered).
func goneEnv(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := sa.(*syscall.SockaddrInet4).Port
	return (&Server{url: "http://127.0.0.1:" + strconv.Itoa(port)}).Env()
}
