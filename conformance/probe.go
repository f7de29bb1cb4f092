package conformance

import (
	"embed"
	"fmt"
	"github.com/autonomyhq/autonomy/playbook"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
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
	r, _ := playbook.Resolve(p) // the probe profiles hold no playbook
	out, err := substrates.Compile(s, r, prof)
	return prof, out, err
}

// ProbeActors are the actors of the probe fleet (conformance/probe).
var ProbeActors = []string{"probe", "overtime", "isolated", "ticker", "launcher", "delegator", "controller", "carrier", "resulter", "prelauncher", "proposer", "reviewer", "maintainer", "asker"}

// Targets are the runners under test of subs, each substrate's that probes its runners
// (substrates.Prober), in order. remote is where a runner not on this machine is probed
// (--repo); exe, when set, is the autonomy binary a runner may read sessions back through.
func Targets(subs []substrates.Substrate, remote, exe string) ([]Target, error) {
	var targets []Target
	for _, s := range subs {
		p, ok := s.(substrates.Prober)
		if !ok {
			continue
		}
		ts, err := p.ProbeTargets(ProbeEnv(s, remote, exe))
		if err != nil {
			return nil, err
		}
		targets = append(targets, ts...)
	}
	return targets, nil
}

// ProbeEnv is what the battery gives s to set up its runners under test.
func ProbeEnv(s substrates.Substrate, remote, exe string) substrates.ProbeEnv {
	return substrates.ProbeEnv{
		CompileFleet: func(scratch string) (string, substrates.Output, error) { return CompileProbeFleet(s, scratch) },
		Actors:       ProbeActors,
		Params:       maps.Clone(Params),
		Remote:       remote,
		Exe:          exe,
	}
}
