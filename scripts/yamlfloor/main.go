// Command yamlfloor decodes a YAML file into yaml.v3 nodes and nothing else: the floor that
// docs/performance.md measures validate and compile against.
//
//	go build -o /tmp/yamlfloor ./scripts/yamlfloor && /usr/bin/time -v /tmp/yamlfloor /tmp/p5k/ir.yml
package main

import (
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: yamlfloor FILE")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "yamlfloor:", err)
		os.Exit(2)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		fmt.Fprintln(os.Stderr, "yamlfloor:", err)
		os.Exit(1)
	}
	fmt.Println(len(n.Content))
}
