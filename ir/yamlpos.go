package ir

// YAMLErrorDiagnostics turns a yaml.v3 error on data into positioned diagnostics of file, as the
// profile loader reports its own: the library names the start of the enclosing block, and these
// point at the offending line. Other formats read with yaml.v3 (the playbooks) report their
// syntax errors through it, so every YAML file of a profile is reported the same way.
func YAMLErrorDiagnostics(file string, data []byte, err error) Diagnostics {
	r := &reporter{file: file}
	reportYAMLError(r, data, err)
	return r.diags
}
