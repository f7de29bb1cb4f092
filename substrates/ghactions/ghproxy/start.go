package ghproxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/internal/proc"
)

// serveConfig is what Start hands the detached server on its stdin: the credential never
// reaches the server's argv or environment, which other processes may read.
type serveConfig struct {
	API         modelproxy.API `json:"api"`
	Upstream    string         `json:"upstream"`
	Key         string         `json:"key"`
	Placeholder string         `json:"placeholder"`
	Policy      Policy         `json:"policy"`
	Dir         string         `json:"dir"`
}

// startTimeout bounds the wait for the server to listen.
const startTimeout = 30 * time.Second

// Start starts the proxy detached from the step (argv runs the server: autonomy gh model-proxy
// --serve), waits until it accepts connections and appends to $GITHUB_ENV the proxy's base URL
// (URLEnv) and the placeholder under the credential's name. It returns the proxy's base URL.
func Start(ctx context.Context, getenv func(string) string, argv []string) (string, error) {
	cfg, err := configFromEnv(getenv)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return "", err
	}
	ghEnv := getenv("GITHUB_ENV")
	if ghEnv == "" {
		return "", errors.New("GITHUB_ENV is not set: model-proxy runs in a GitHub Actions step")
	}
	root, err := spawn(ctx, argv, cfg)
	if err != nil {
		return "", err
	}
	base := agentURL(cfg.API, root)
	f, err := os.OpenFile(ghEnv, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	_, err = fmt.Fprintf(f, "%s=%s\n%s=%s\n", URLEnv, base, getenv(CredentialEnv), cfg.Placeholder)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return base, err
}

// configFromEnv reads the step's env.
func configFromEnv(getenv func(string) string) (serveConfig, error) {
	api, err := parseAPI(getenv(APIEnv))
	if err != nil {
		return serveConfig{}, err
	}
	name := getenv(CredentialEnv)
	if name == "" {
		return serveConfig{}, fmt.Errorf("%s is not set: it names the variable holding the model credential", CredentialEnv)
	}
	key := getenv(name)
	if key == "" {
		return serveConfig{}, fmt.Errorf("%s: %w", name, errNoCredential)
	}
	up, err := upstream(api, getenv(URLEnv))
	if err != nil {
		return serveConfig{}, err
	}
	pol, err := ParsePolicy(getenv(PolicyEnv))
	if err != nil {
		return serveConfig{}, err
	}
	temp := getenv("RUNNER_TEMP")
	if temp == "" {
		return serveConfig{}, errors.New("RUNNER_TEMP is not set: model-proxy runs in a GitHub Actions step")
	}
	return serveConfig{API: api, Upstream: up, Key: key, Placeholder: modelproxy.NewPlaceholder(), Policy: pol, Dir: filepath.Join(temp, Dir)}, nil
}

// spawn starts the server in a session of its own (the runner keeps it until the job ends),
// writes it cfg and reads the root URL it listens on.
func spawn(ctx context.Context, argv []string, cfg serveConfig) (string, error) {
	logf, err := os.OpenFile(filepath.Join(cfg.Dir, logFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	// Only what a Go program needs: none of the step's env (the credential is in it).
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.Stderr = logf
	cmd.SysProcAttr = proc.Detach()
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return "", err
	}
	if err := json.NewEncoder(in).Encode(cfg); err != nil {
		return fail(fmt.Errorf("model proxy: %w", err))
	}
	_ = in.Close()
	root, err := readRoot(ctx, out)
	if err != nil {
		return fail(fmt.Errorf("model proxy did not start: %w (see %s)", err, filepath.Join(cfg.Dir, logFile)))
	}
	if err := dial(ctx, root); err != nil {
		return fail(err)
	}
	return root, cmd.Process.Release()
}

// readRoot reads the server's one line, its root URL, within startTimeout.
func readRoot(ctx context.Context, out io.ReadCloser) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(io.LimitReader(out, 4096)).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	select {
	case line := <-got:
		if u, err := url.Parse(line); err != nil || u.Scheme != "http" || u.Host == "" {
			return "", fmt.Errorf("it said %q, not its URL", line)
		}
		return line, nil
	case <-ctx.Done():
		_ = out.Close()
		return "", fmt.Errorf("no URL within %s", startTimeout)
	}
}

// dial checks that the proxy at root accepts connections.
func dial(ctx context.Context, root string) error {
	u, _ := url.Parse(root)
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return fmt.Errorf("model proxy at %s does not accept connections: %w", root, err)
	}
	return c.Close()
}
