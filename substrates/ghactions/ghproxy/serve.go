package ghproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/internal/proc"
)

// Record is the usage file: what the run used, and why the budget refused a request ("" when
// it refused none).
type Record struct {
	Usage     modelproxy.Usage  `json:"usage"`
	Budget    modelproxy.Budget `json:"budget"`
	Exhausted string            `json:"exhausted,omitempty"`
}

// maxConfig bounds what Serve reads on stdin.
const maxConfig = 1 << 20

// usageEvery is how often a running proxy rewrites the usage file (and once more on exit), so a
// job cut short still leaves figures.
const usageEvery = 2 * time.Second

// Serve runs the proxy Start spawned: it reads its config on stdin, records its pid, prints its
// root URL on stdout (then closes it) and serves until ctx ends, keeping the usage file.
func Serve(ctx context.Context, stdin io.Reader, stdout io.WriteCloser) error {
	var cfg serveConfig
	if err := json.NewDecoder(io.LimitReader(stdin, maxConfig)).Decode(&cfg); err != nil {
		return fmt.Errorf("model proxy: reading its config on stdin: %w", err)
	}
	tr, err := os.OpenFile(filepath.Join(cfg.Dir, TranscriptFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer tr.Close()
	pc := modelproxy.Config{Placeholder: cfg.Placeholder, Budget: cfg.Policy.Budget, Prices: cfg.Policy.Prices, Transcript: tr}
	if cfg.API == modelproxy.Anthropic {
		pc.AnthropicUpstream, pc.AnthropicKey = cfg.Upstream, cfg.Key
	} else {
		pc.OpenAIUpstream, pc.OpenAIKey = cfg.Upstream, cfg.Key
	}
	p, err := modelproxy.New(pc)
	if err != nil {
		return err
	}
	if err := writePid(cfg.Dir); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	root, done, err := modelproxy.Listen(ctx, p)
	if err != nil {
		return err
	}
	save := func() error {
		return writeRecord(cfg.Dir, Record{Usage: p.Usage(), Budget: cfg.Policy.Budget, Exhausted: p.Exhausted()})
	}
	if err := save(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(stdout, root); err != nil {
		return err
	}
	_ = stdout.Close()
	tick := time.NewTicker(usageEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if err := save(); err != nil {
				fmt.Fprintf(os.Stderr, "model proxy: %v\n", err)
			}
		case err := <-done:
			return errors.Join(err, save())
		case <-ctx.Done():
			cancel()
			return errors.Join(<-done, save())
		}
	}
}

// writePid records the server as (pid, start time), which names it for good.
func writePid(dir string) error {
	pid := os.Getpid()
	start, err := proc.StartTime(pid)
	if err != nil {
		start = 0
	}
	return os.WriteFile(filepath.Join(dir, pidFile), fmt.Appendf(nil, "%d %d\n", pid, start), 0o600)
}

// writeRecord replaces the usage file atomically.
func writeRecord(dir string, r Record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, UsageFile+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, UsageFile))
}
