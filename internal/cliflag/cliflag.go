// Package cliflag binds the flags every autonomy command names the same way, whichever package
// contributes the command: --target for the substrate and --dir for the installation, each with
// its older name as a hidden alias that still works.
package cliflag

import "github.com/spf13/pflag"

// Target binds --target, the one name of the substrate in every command, to p, with --substrate
// (its name in runner and conformance before) as a hidden alias.
func Target(fs *pflag.FlagSet, p *string, def, usage string) {
	aliased(fs, p, "target", "substrate", def, usage)
}

// Dir binds --dir, the one name of the installation directory in every command, to p, with
// alias (compile's --out before), when given, as a hidden alias.
func Dir(fs *pflag.FlagSet, p *string, alias, def, usage string) {
	aliased(fs, p, "dir", alias, def, usage)
}

func aliased(fs *pflag.FlagSet, p *string, name, alias, def, usage string) {
	fs.StringVar(p, name, def, usage)
	if alias != "" {
		fs.StringVar(p, alias, def, "the older name of --"+name)
		_ = fs.MarkHidden(alias)
	}
}
