// Command etcd is upstream etcd's server main, built from the module proxy
// into bin/k8s/<version>/ for the chart's server-side dry run (make
// kube-assets): the project downloads no release binaries.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
