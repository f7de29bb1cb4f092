package playbook

import (
	"fmt"
	"io/fs"

	"github.com/autonomyhq/autonomy/playbook/capsule"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
	"github.com/autonomyhq/autonomy/playbook/overlay"
	"github.com/autonomyhq/autonomy/playbook/steps"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// SizeLimit is the largest file of format f in bytes: a workflow's for a file Detect cannot
// place (the workflow runtime reads it as one).
func SizeLimit(f Format) int {
	switch f {
	case Steps:
		return steps.MaxSize
	case Capsule:
		return capsule.MaxSize
	case Overlay:
		return overlay.MaxSize
	}
	return workflow.MaxSize
}

// ReadFile reads a playbook file to run it, with validate's checks: a regular file only (a
// FIFO, a device, a socket or a directory, or a symbolic link to one, is refused without
// waiting on it), of at most MaxFileSize bytes, and at most the SizeLimit of the format Detect
// gives it. The errors name path and say what to give instead.
func ReadFile(path string) ([]byte, Format, error) {
	data, err := source.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, Unknown, err
	}
	f, _ := Detect(path, data)
	if limit := SizeLimit(f); len(data) > limit {
		what := map[Format]string{Steps: "step playbook", Workflow: "workflow", Capsule: "capsule playbook", Overlay: "overlay"}[f]
		if what == "" {
			what = "playbook"
		}
		return nil, f, &fs.PathError{Op: "read", Path: path,
			Err: fmt.Errorf("the %s is %d bytes; the limit is %d: split it", what, len(data), limit)}
	}
	return data, f, nil
}

// ReadRegular reads the regular file at path, at most limit bytes, as ReadFile does: a FIFO, a
// device, a socket or a directory (or a symbolic link to one) is refused without waiting on it,
// as is a file over limit. The errors name path.
func ReadRegular(path string, limit int64) ([]byte, error) { return source.ReadFile(path, limit) }

// WriteRegular writes data to the regular file at path (created 0600 when missing), replacing
// what it holds or, with appendTo, appending to it. A FIFO, a device, a socket or a directory is
// refused without blocking on it. The errors name path.
func WriteRegular(path string, data []byte, appendTo bool) error {
	return source.WriteFile(path, data, 0o600, appendTo)
}

// CheckRegular refuses a path that exists and is not a regular file (a FIFO, a device, a socket,
// a directory), without opening it; a missing path passes. The error names path.
func CheckRegular(path string) error { return source.CheckRegular(path) }

// Reason is what an error of ReadRegular, WriteRegular or CheckRegular says after the path it
// names: the message without the operation and the path.
func Reason(err error) string { return source.Reason(err) }
