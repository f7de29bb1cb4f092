package ghproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
)

// ErrExhausted is Report's error when the budget refused a request; its message is the proxy's
// reason ("budget exhausted: …").
var ErrExhausted = errors.New("budget exhausted")

// stopGrace is how long the proxy has to write its last figures.
const stopGrace = 10 * time.Second

// Report stops the proxy Start started, adds the run's usage as a table to
// $GITHUB_STEP_SUMMARY and returns the record; the error wraps ErrExhausted when the budget
// refused a request (the job must fail with it as its annotation). No usage file (the proxy
// never started) is an error.
func Report(getenv func(string) string, w io.Writer) (Record, error) {
	dir := filepath.Join(getenv("RUNNER_TEMP"), Dir)
	if getenv("RUNNER_TEMP") == "" {
		return Record{}, errors.New("RUNNER_TEMP is not set: model-usage runs in a GitHub Actions step")
	}
	stop(dir)
	data, err := os.ReadFile(filepath.Join(dir, UsageFile))
	if err != nil {
		return Record{}, fmt.Errorf("no usage: the model proxy did not run (%w)", err)
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return Record{}, fmt.Errorf("%s: %w", filepath.Join(dir, UsageFile), err)
	}
	table := Table(rec)
	fmt.Fprint(w, table)
	if sum := getenv("GITHUB_STEP_SUMMARY"); sum != "" {
		f, err := os.OpenFile(sum, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return rec, err
		}
		_, err = io.WriteString(f, table)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return rec, err
		}
	}
	if rec.Exhausted != "" {
		return rec, fmt.Errorf("%w:%s", ErrExhausted, strings.TrimPrefix(rec.Exhausted, "budget exhausted:"))
	}
	return rec, nil
}

// stop ends the proxy recorded in dir, if it still runs, and waits for it to write its figures.
func stop(dir string) {
	data, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil {
		return
	}
	var pid int
	var start uint64
	if _, err := fmt.Sscan(string(data), &pid, &start); err != nil || pid <= 0 {
		return
	}
	if start != 0 && !proc.Alive(pid, start) {
		return
	}
	_ = proc.Terminate(pid, stopGrace)
}

// Table is the usage as a markdown table, with the budget beside each figure.
func Table(r Record) string {
	limit := func(n int64) string {
		if n == 0 {
			return "unlimited"
		}
		return fmt.Sprint(n)
	}
	cost := "unlimited"
	if r.Budget.CostUSD > 0 {
		cost = fmt.Sprintf("$%.4f", r.Budget.CostUSD)
	}
	var b strings.Builder
	b.WriteString("### Model usage\n\n| | used | budget |\n|---|---:|---:|\n")
	fmt.Fprintf(&b, "| requests | %d | %s |\n", r.Usage.Requests, limit(r.Budget.Requests))
	fmt.Fprintf(&b, "| input tokens | %d | |\n", r.Usage.InputTokens)
	fmt.Fprintf(&b, "| cached input tokens | %d | |\n", r.Usage.CachedInputTokens)
	fmt.Fprintf(&b, "| output tokens | %d | |\n", r.Usage.OutputTokens)
	fmt.Fprintf(&b, "| tokens | %d | %s |\n", r.Usage.Tokens(), limit(r.Budget.Tokens))
	fmt.Fprintf(&b, "| cost (USD) | $%.4f | %s |\n", r.Usage.CostUSD, cost)
	if r.Usage.Estimated {
		b.WriteString("\nSome usage was estimated from the size of a response the API did not report it for.\n")
	}
	if r.Exhausted != "" {
		fmt.Fprintf(&b, "\n**%s**\n", r.Exhausted)
	}
	b.WriteString("\n")
	return b.String()
}
