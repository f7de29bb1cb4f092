package gitws

import (
	"context"
	"fmt"
	"strings"
)

// Git runs git -C dir args… as the runner runs every git command (no hook, fsmonitor, filter,
// merge driver, replace ref, graft, commit-graph, global or system configuration, nor prompt:
// see gitEnv; retried on a lock file) and returns its standard output, trimmed.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	return git(ctx, dir, args...)
}

// Output is Git with the output as git wrote it: NUL-separated paths (-z) keep every byte,
// leading and trailing spaces included; on a failure, what git wrote before it failed.
func Output(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return gitRaw(ctx, dir, args)
}

// Failed says whether err is git's exit with status code (1 for "no", as merge-base
// --is-ancestor answers).
func Failed(err error, code int) bool { return exitCode(err) == code }

// OutputAlt is Output with the objects of the object directory alt read as well, as an
// alternate of dir's (GIT_ALTERNATE_OBJECT_DIRECTORIES): git reads an object there when dir
// lacks it (one dir holds is read from dir), and writes nothing there.
func OutputAlt(ctx context.Context, dir, alt string, args ...string) ([]byte, error) {
	if alt == "" {
		return gitRaw(ctx, dir, args)
	}
	return gitRawEnv(ctx, dir, []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + quoteAlt(alt)}, args)
}

// GitAlt is OutputAlt with the output trimmed, as Git's.
func GitAlt(ctx context.Context, dir, alt string, args ...string) (string, error) {
	out, err := OutputAlt(ctx, dir, alt, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// quoteAlt is path as one entry of GIT_ALTERNATE_OBJECT_DIRECTORIES: C-quoted, which git reads
// back whole, so that a ':' (the list's separator) or a quote in it splits nothing.
func quoteAlt(path string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
