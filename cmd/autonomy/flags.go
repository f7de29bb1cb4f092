package main

import "github.com/spf13/pflag"

// targetFlag binds --target, the one name of the substrate in every command, to p, with
// --substrate (its name in runner and conformance before) as a hidden alias that still works.
func targetFlag(fs *pflag.FlagSet, p *string, def, usage string) {
	aliasedFlag(fs, p, "target", "substrate", def, usage)
}

// dirFlag binds --dir, the one name of the installation directory in every command, to p, with
// alias (compile's --out before) as a hidden alias that still works, when given.
func dirFlag(fs *pflag.FlagSet, p *string, alias, def, usage string) {
	aliasedFlag(fs, p, "dir", alias, def, usage)
}

func aliasedFlag(fs *pflag.FlagSet, p *string, name, alias, def, usage string) {
	fs.StringVar(p, name, def, usage)
	if alias != "" {
		fs.StringVar(p, alias, def, "the older name of --"+name)
		_ = fs.MarkHidden(alias)
	}
}
