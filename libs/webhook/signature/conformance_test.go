package signature_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

func loadVectors(t testing.TB) conformanceFile {
	t.Helper()
	data, err := os.ReadFile(vectorsPath)
	require.NoError(t, err)
	var f conformanceFile
	require.NoError(t, json.Unmarshal(data, &f))
	return f
}

// TestConformance checks every vector of the published file: accepted ones
// verify, refused ones fail with exactly the named reason.
func TestConformance(t *testing.T) {
	f := loadVectors(t)
	jwks, err := json.Marshal(f.JWKS)
	require.NoError(t, err)
	keys, err := signature.ParseJWKS(jwks)
	require.NoError(t, err)
	require.Equal(t, signature.Reasons(), f.Reasons)
	require.Equal(t, signature.DefaultTolerance, time.Duration(f.ToleranceSeconds)*time.Second)

	seen := map[string]bool{}
	covered := map[signature.Reason]bool{}
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			require.False(t, seen[v.Name], "vector names are unique")
			seen[v.Name] = true
			body, err := base64.StdEncoding.DecodeString(v.BodyBase64)
			require.NoError(t, err)
			require.Equal(t, v.Body, string(body), "body and bodyBase64 agree")
			h := http.Header{}
			for _, kv := range v.Headers {
				h.Add(kv[0], kv[1])
			}
			now, err := signature.ParseTimestamp(v.Now)
			require.NoError(t, err)

			got, err := signature.Verify(h, body, f.EndpointID, keys.Lookup, now, 0)
			switch v.Expect {
			case "accept":
				require.NoError(t, err)
				require.Equal(t, h.Get(signature.HeaderEventID), got.EventID)
				require.Equal(t, h.Get(signature.HeaderKeyID), got.KeyID)
				require.Equal(t, f.EndpointID, got.EndpointID)
				require.Equal(t, h.Get(signature.HeaderTest) == "true", got.Test)
				require.Equal(t, v.CanonicalInput, string(signature.CanonicalInput(
					h.Get(signature.HeaderEventID), h.Get(signature.HeaderEventTimestamp),
					h.Get(signature.HeaderKeyID), h.Get(signature.HeaderEndpointID), h.Get(signature.HeaderTest),
					h.Get(signature.HeaderContentDigest))))
			case "refuse":
				require.Error(t, err)
				require.Equal(t, v.Reason, signature.ReasonOf(err), "error: %v", err)
				covered[v.Reason] = true
			default:
				t.Fatalf("expect %q", v.Expect)
			}
		})
	}
	for _, r := range signature.Reasons() {
		require.True(t, covered[r], "no vector refuses with %s", r)
	}
}

// TestDocsWorkedExample keeps the worked example of
// docs/webhook-signatures.md equal to the accept_basic vector.
func TestDocsWorkedExample(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/webhook-signatures.md")
	if err != nil {
		t.Skipf("docs/webhook-signatures.md is not beside this module (outside a full checkout): %v", err)
	}
	f := loadVectors(t)
	v := f.Vectors[0]
	require.Equal(t, "accept_basic", v.Name)
	text := string(doc)
	require.Contains(t, text, "\n"+v.Body+"\n")
	require.Contains(t, text, fmt.Sprintf("Body (%d bytes, sent exactly so)", len(v.Body)))
	for _, kv := range v.Headers {
		require.Contains(t, text, "\n"+kv[0]+": "+kv[1]+"\n")
	}
	require.Contains(t, text, "   "+strings.ReplaceAll(v.CanonicalInput, "\n", "\n   ")+"\n")
	require.Contains(t, text, "`"+f.JWKS.Keys[0].X+"`")
	require.Contains(t, text, "`"+f.Keys[0].PublicKeyHex+"`")
	require.Contains(t, text, v.Now)
}

// TestDocsExampleKeysCannotPassForRealOnes is item 7 of "Security, round
// 2": the JWKS example of docs/webhook-signatures.md is named as an example
// and is none of the conformance keys (whose seeds are public), and every
// conformance key's kid says its seed is public, so none looks like a key
// of a deployment (pcwh_<environment>_…).
func TestDocsExampleKeysCannotPassForRealOnes(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/webhook-signatures.md")
	if err != nil {
		t.Skipf("docs/webhook-signatures.md is not beside this module (outside a full checkout): %v", err)
	}
	f := loadVectors(t)
	_, rest, ok := strings.Cut(string(doc), "## Verification keys (JWKS)")
	require.True(t, ok)
	_, rest, ok = strings.Cut(rest, "```json\n")
	require.True(t, ok)
	example, _, ok := strings.Cut(rest, "\n```")
	require.True(t, ok)
	set, err := signature.ParseJWKS([]byte(example))
	require.NoError(t, err)
	require.NotEmpty(t, set)
	for kid, pub := range set {
		require.True(t, strings.HasPrefix(kid, "example-not-a-real-key-"), kid)
		_, err := signature.ParseKeyID(kid)
		require.Error(t, err, "%s has the form of a deployment's key id", kid)
		for _, k := range f.Keys {
			require.NotEqual(t, k.KeyID, kid)
			require.NotEqual(t, k.PublicKeyHex, fmt.Sprintf("%x", []byte(pub)), "the docs' example key %s is conformance %s", kid, k.Name)
		}
	}
	for _, k := range f.Keys {
		require.Contains(t, k.KeyID, "seed-is-public.not-a-real-key", k.Name)
		_, err := signature.ParseKeyID(k.KeyID)
		require.Error(t, err, "%s has the form of a deployment's key id", k.KeyID)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}
