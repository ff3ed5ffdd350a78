package jcs_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/pcourt/pcourt/libs/jcs"
)

// BenchmarkCanonicalize canonicalizes the terms of a three-party case draft
// (testdata/draft-terms.json, 1.5 KB), the largest form the services hash
// per request: the draft digest is checked against it on every load.
func BenchmarkCanonicalize(b *testing.B) {
	terms, err := os.ReadFile("testdata/draft-terms.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(terms)))
	b.ReportAllocs()
	for range b.N {
		if _, err := jcs.Canonicalize(json.RawMessage(terms)); err != nil {
			b.Fatal(err)
		}
	}
}
