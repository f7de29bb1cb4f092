// Command autonomy validates autonomy.ir.v1 agent-fleet profiles, compiles them onto substrates and
// runs them. See README.md for the commands.
package main

import (
	"os"

	_ "github.com/autonomyhq/autonomy/internal/gcfloor" // no collection cycle at start (package gcfloor)
)

func main() { os.Exit(Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
