// Command kube-apiserver is upstream's cmd/kube-apiserver main (k8s.io/kubernetes
// at the chart's Kubernetes version, which tools/kubeassets/go.mod
// requires), built from the module proxy into bin/k8s/<version>/ for the
// chart's server-side dry run and the edge's controller tests (make
// kube-assets): the project downloads no release binaries.
package main

import (
	"os"
	_ "time/tzdata" // upstream embeds the time zone database too

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
