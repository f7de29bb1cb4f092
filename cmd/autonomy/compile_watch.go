package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/watch"
)

// watchInterval is how often compile --watch looks at the profile's files.
const watchInterval = 300 * time.Millisecond

// watchCompile is compile --watch: compile once, then again each time a file of the profile's
// directory changes, printing each result, until SIGINT or SIGTERM (exit 0). A compile that
// fails is printed and the watch goes on: the next edit may fix it.
func watchCompile(cmd *cobra.Command, o compileOpts) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	root := o.profile
	if info, err := os.Stat(root); err == nil && !info.IsDir() {
		root = filepath.Dir(root)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	once := func() {
		if err := compileOnce(out, errOut, o); err != nil {
			var ee *exitError
			if !errors.As(err, &ee) {
				fmt.Fprintln(errOut, "autonomy:", err)
			} else if ee.Msg != "" {
				fmt.Fprintln(errOut, "autonomy:", ee.Msg)
			}
		}
		fmt.Fprintf(errOut, "autonomy: watching %s for changes (Ctrl-C stops)\n", root)
	}
	from, err := watch.Fingerprint(root)
	if err != nil {
		return usageError("%v", err)
	}
	once()
	if err := watch.Poll(ctx, root, watchInterval, from, once); err != nil {
		return usageError("%v", err)
	}
	fmt.Fprintln(errOut, "autonomy: stopped watching")
	return nil
}
