package signature_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPythonVerifierAgrees runs testdata/verify.py, a verifier written in
// Python from docs/webhook-signatures.md alone, over the conformance vectors:
// a receiver built from the docs reaches the same verdict on every vector.
func TestPythonVerifierAgrees(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the cross-language check of the vectors is skipped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, python, "-c", "import cryptography").CombinedOutput(); err != nil {
		t.Skipf("the Python package cryptography is not installed (pip install cryptography): the cross-language check is skipped: %s", strings.TrimSpace(string(out)))
	}
	cmd := exec.CommandContext(ctx, python, "verify.py", "conformance.json")
	cmd.Dir = "testdata"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("verify.py disagrees with the vectors: %v\n%s", err, out)
	}
	t.Logf("%s", lastLine(string(out)))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
