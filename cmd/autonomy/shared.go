package main

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/autonomyhq/autonomy/internal/cliflag"
	"github.com/autonomyhq/autonomy/internal/cliout"
)

// targetFlag binds --target, with --substrate as a hidden alias (cliflag.Target).
func targetFlag(fs *pflag.FlagSet, p *string, def, usage string) { cliflag.Target(fs, p, def, usage) }

// dirFlag binds --dir, with alias as a hidden alias when given (cliflag.Dir).
func dirFlag(fs *pflag.FlagSet, p *string, alias, def, usage string) {
	cliflag.Dir(fs, p, alias, def, usage)
}

// writeJSON writes v as every command prints JSON (cliout.WriteJSON).
func writeJSON(w io.Writer, v any) error { return cliout.WriteJSON(w, v) }
