// Package kubecheck applies the Helm chart in deploy/helm/pcourt to a real
// kube-apiserver and etcd with server-side dry run: what the offline checks
// of tools/helmcheck cannot see (defaulting, validation, the CRD's schema as
// the API server reads it, admission) is judged by the API server itself.
// The binaries are built from source by `make kube-assets` into
// bin/k8s/<version>/, envtest's asset layout; its test skips without them.
package kubecheck

import (
	"os"
	"path/filepath"

	"github.com/pcourt/pcourt/tools/helmcheck"
)

// Assets returns the directory holding etcd and kube-apiserver:
// $KUBEBUILDER_ASSETS when set, else <repo>/bin/k8s/<KubeVersion> when both
// binaries are there, else "".
func Assets(repo string) string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	dir, err := filepath.Abs(filepath.Join(repo, "bin", "k8s", helmcheck.KubeVersion))
	if err != nil {
		return ""
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return ""
		}
	}
	return dir
}
