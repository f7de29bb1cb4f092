package localcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/shim"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// The shell of a walled session (its jail keeps the runner's state read-only) asks its runner
// verbs through the session's door, which its supervisor answers as the session (local.Door;
// docs/local.md, "The wall").

// doorVerbs are the runner verbs asked through the door; the shims' (gh, bun) are asked by
// shimCall.
var doorVerbs = []string{"launch", "list", "get", "update", "cancel", "logs"}

// runnerOnlyFlags are the runner's own flags, which a door request does not carry: it acts on
// this installation, on the local runner.
var runnerOnlyFlags = []string{"dir", "target", "kubeconfig", "namespace"}

// viaDoor asks cmd through the session's door when this process is a walled session's shell;
// done is false otherwise.
func (f *runnerFlags) viaDoor(cmd *cobra.Command, args []string) (done bool, err error) {
	if !slices.Contains(doorVerbs, cmd.Name()) {
		return false, nil
	}
	d, ok := local.DoorOf(f.dir, os.Getenv(local.SessionEnv))
	if !ok {
		return false, nil
	}
	req := local.DoorRequest{Verb: cmd.Name()}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if slices.Contains(runnerOnlyFlags, fl.Name) {
			return
		}
		values := []string{fl.Value.String()}
		if s, ok := fl.Value.(pflag.SliceValue); ok {
			values = s.GetSlice()
		}
		for _, v := range values {
			req.Args = append(req.Args, "--"+fl.Name+"="+v)
		}
	})
	req.Args = append(append(req.Args, "--"), args...)
	return true, askDoor(cmd, d, req)
}

// askDoor asks req through d and prints its answer, exiting as the verb did.
func askDoor(cmd *cobra.Command, d *local.Door, req local.DoorRequest) error {
	a, err := d.Call(ctxOf(cmd), req)
	if err != nil {
		return exitcode.Usagef("%s: %v", req.Verb, err)
	}
	fmt.Fprint(cmd.OutOrStdout(), a.Stdout)
	fmt.Fprint(cmd.ErrOrStderr(), a.Stderr)
	if a.Code != 0 {
		return &exitcode.Error{Code: a.Code}
	}
	return nil
}

// shimViaDoor asks a write of the gh or bun shim (name, with its words args) through the
// session's door when this process is a walled session's shell; done is false otherwise. The
// files the command read here (a --body-file) go with it: the supervisor reads none.
func (f *runnerFlags) shimViaDoor(cmd *cobra.Command, name string, args []string, files map[string][]byte) (done bool, err error) {
	d, ok := local.DoorOf(f.dir, os.Getenv(local.SessionEnv))
	if !ok {
		return false, nil
	}
	return true, askDoor(cmd, d, local.DoorRequest{Verb: name, Args: args, Files: files})
}

// recording is a shim.ReadFile that keeps what it read, for the door.
func recording(read shim.ReadFile, files map[string][]byte) shim.ReadFile {
	return func(name string) ([]byte, error) {
		data, err := read(name)
		if err == nil {
			files[name] = data
		}
		return data, err
	}
}

// doorFiles is, in a verb the supervisor runs for the door (local.DoorEnv), the shim.ReadFile
// of the files the shell's command read, from stdin; else read.
func doorFiles(stdin io.Reader, read shim.ReadFile) shim.ReadFile {
	if os.Getenv(local.DoorEnv) != "1" {
		return read
	}
	var files map[string][]byte
	dec := json.NewDecoder(io.LimitReader(stdin, 8<<20))
	if err := dec.Decode(&files); err != nil && err != io.EOF {
		return func(string) ([]byte, error) { return nil, fmt.Errorf("the door's files cannot be read: %v", err) }
	}
	return func(name string) ([]byte, error) {
		data, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("%s was not read in the session's shell", name)
		}
		return data, nil
	}
}

// noPassInDoor refuses, in a verb the supervisor runs for the door, to run the real program:
// the shell runs its reads itself.
func noPassInDoor(name string) error {
	if os.Getenv(local.DoorEnv) == "1" {
		return exitcode.Problemf("%s: refused: a read runs in the session's shell, never through its door", name)
	}
	return nil
}

// ctxOf is cmd's context, or the background.
func ctxOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
