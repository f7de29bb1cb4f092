package conformance

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// probeFleet is the profile whose actors the battery launches (conformance/probe).
//
//go:embed probe
var probeFleet embed.FS

// WriteProbeFleet writes the probe fleet's profile into dir, scripts executable.
func WriteProbeFleet(dir string) error {
	return fs.WalkDir(probeFleet, "probe", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := probeFleet.ReadFile(path)
		if err != nil {
			return err
		}
		full := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(path, "probe/")))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(path, ".sh") {
			mode = 0o755
		}
		return os.WriteFile(full, data, mode)
	})
}

// CompileProbeFleet writes the probe fleet under scratch and compiles it for s, returning the
// profile's directory and the Output.
func CompileProbeFleet(s substrates.Substrate, scratch string) (string, substrates.Output, error) {
	prof := filepath.Join(scratch, "probe-fleet")
	if err := WriteProbeFleet(prof); err != nil {
		return "", substrates.Output{}, err
	}
	p, diags, err := ir.Check(prof)
	if err != nil {
		return "", substrates.Output{}, err
	}
	if diags.HasErrors() {
		return "", substrates.Output{}, fmt.Errorf("the probe fleet does not validate:\n%s", diags)
	}
	r, diags := playbook.Resolve(p)
	if diags.HasErrors() {
		return "", substrates.Output{}, fmt.Errorf("the probe fleet's playbooks do not validate:\n%s", diags)
	}
	out, err := substrates.Compile(s, r, prof)
	return prof, out, err
}

// LocalTargets are the local substrate's two runners: the exec runner (agents as processes) and
// the human runner (asks parked for a person), each probed in a fresh installation of the probe
// fleet, supervised in this process. Timeouts count in seconds instead of minutes.
func LocalTargets() []Target {
	return []Target{
		{Name: "local exec", Substrate: "local", New: func(ctx context.Context) (*Subject, error) { return newLocal(ctx, false) }},
		{Name: "local human", Substrate: "local", Human: true, New: func(ctx context.Context) (*Subject, error) { return newLocal(ctx, true) }},
	}
}

func newLocal(ctx context.Context, human bool) (sub *Subject, err error) {
	scratch, err := os.MkdirTemp("", "autonomy-conformance-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(scratch)
		}
	}()
	_, out, err := CompileProbeFleet(local.Substrate{}, scratch)
	if err != nil {
		return nil, err
	}
	inst := filepath.Join(scratch, "install")
	if err := os.MkdirAll(inst, 0o755); err != nil {
		return nil, err
	}
	// Isolated workspaces are git worktrees: the installation is a repository with a commit.
	gitErr := gitInit(ctx, inst)
	if _, err := substrates.Write(inst, &out, substrates.WriteOptions{}); err != nil {
		return nil, err
	}
	r, err := local.New(inst, local.Options{Minute: time.Second})
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(inst)
	if err != nil {
		r.Close()
		return nil, err
	}
	state := filepath.Join(root, ".autonomy", "state", "probe")
	s := &Subject{
		Runner:        r.Contract(),
		Actor:         "probe",
		Timeout:       "overtime",
		TimeoutWait:   30 * time.Second,
		MaxConcurrent: r.In.Runner.MaxConcurrent,
		Isolated:      "isolated",
		Seen: func(ctx context.Context, id string) (map[string]string, error) {
			seen := map[string]string{}
			for k := range Params {
				data, err := os.ReadFile(filepath.Join(state, id, k))
				if errors.Is(err, os.ErrNotExist) {
					return nil, nil // not reported yet
				}
				if err != nil {
					return nil, err
				}
				seen[k] = strings.TrimSuffix(string(data), "\n") // printenv adds one
			}
			return seen, nil
		},
		Workspace: func(ctx context.Context, id string) (string, string, bool, error) {
			data, err := os.ReadFile(filepath.Join(state, "where-"+id))
			if errors.Is(err, os.ErrNotExist) {
				return "", root, false, nil
			}
			if err != nil {
				return "", root, false, err
			}
			ran := strings.TrimSpace(string(data))
			got, _, err := r.Get(ctx, id)
			if err != nil || !got.Status.Ended() {
				return ran, root, false, err
			}
			_, statErr := os.Stat(ran)
			return ran, root, errors.Is(statErr, os.ErrNotExist), nil
		},
		Close: func() {
			if ss, err := r.List(context.Background(), false); err == nil {
				for _, x := range ss {
					r.Cancel(context.Background(), x.ID)
				}
			}
			r.Close()
			os.RemoveAll(scratch)
		},
	}
	if gitErr != nil {
		s.Isolated, s.NotProbed = "", fmt.Sprintf("isolated workspaces need git: %v", gitErr)
	}
	if human {
		s.Actor, s.Human = "asker", true
	}
	return s, nil
}

// gitInit makes dir a git repository with one commit.
func gitInit(ctx context.Context, dir string) error {
	for _, args := range [][]string{
		{"init", "--quiet"},
		{"-c", "user.name=autonomy", "-c", "user.email=conformance@autonomy.invalid", "commit", "--quiet", "--allow-empty", "-m", "conformance probe"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
