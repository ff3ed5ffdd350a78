// Command importrules checks the repository's import rules, which `make
// lint` runs:
//   - a pure domain package (see PureDomains) imports no Gin, Redis, Kafka
//     or net/http, directly or through another package of the repository;
//   - services never import each other, and no service module requires
//     another (test files included, so `go list -deps` of a service names no
//     other service);
//   - libs and tools import no service, test files included;
//   - every module of the repository requires a dependency at one version
//     (each builds on its own, so two versions are two compiles).
//
// Pending lists the known violations scheduled to go; an entry whose
// violation is gone is itself reported.
//
// Usage: go run ./tools/importrules [root] (default: the current directory).
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	os.Exit(run(root, os.Stdout, os.Stderr))
}

func run(root string, stdout, stderr io.Writer) int {
	violations, err := Check(root)
	if err != nil {
		fmt.Fprintf(stderr, "importrules: %v\n", err)
		return 2
	}
	for _, v := range violations {
		fmt.Fprintln(stdout, v)
	}
	if len(violations) > 0 {
		fmt.Fprintf(stderr, "importrules: %d violation(s)\n", len(violations))
		return 1
	}
	return 0
}
