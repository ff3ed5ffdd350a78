package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// make run keeps evidence files in a directory of its state, where a
// deployment names a bucket, and spools uploads beside them.
func TestCasesKeepsEvidenceInTheStateDirectory(t *testing.T) {
	services := stackServices(config{Dir: "/state", EdgePort: 18080}, &devRedis{addrs: []string{"127.0.0.1:6390"}, mode: "standalone"}, []string{"127.0.0.1:9092"}, "http://127.0.0.1:18085")
	for _, s := range services {
		if s.name != "cases" {
			for _, kv := range s.env {
				require.NotContains(t, kv, "EVIDENCE_", "%s keeps no evidence", s.name)
			}
			continue
		}
		require.Contains(t, s.env, "EVIDENCE_STORE_DIR=/state/evidence")
		require.Contains(t, s.env, "EVIDENCE_SPOOL_DIR=/state/evidence-spool")
	}
}
