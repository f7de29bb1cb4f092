package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/buildinfo"
)

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version of autonomy",
		Example: `  autonomy version`,
		Args:    cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "autonomy %s\n", versionLine(buildinfo.Read()))
		},
	}
}

// versionLine is what `autonomy version` prints after "autonomy ": the version, then the
// commit it was built from (when the build has one), Go's version and the platform.
func versionLine(i buildinfo.Info) string {
	src := i.Source()
	if src != "" {
		src += ", "
	}
	return fmt.Sprintf("%s (%s%s, %s/%s)", i, src, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
