package jwk_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/jwk"
)

func testKey(t testing.TB, name string) ed25519.PublicKey {
	t.Helper()
	seed := sha256.Sum256([]byte(name))
	return ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
}

func TestMarshalThenParse(t *testing.T) {
	a, b := testKey(t, "a"), testKey(t, "b")
	data, err := jwk.MarshalJWKS(jwk.NewJWK("key-a", a), jwk.NewJWK("key-b", b))
	require.NoError(t, err)
	require.JSONEq(t, `{"keys":[`+
		`{"kty":"OKP","crv":"Ed25519","x":"`+jwk.NewJWK("key-a", a).X+`","kid":"key-a","use":"sig","alg":"EdDSA"},`+
		`{"kty":"OKP","crv":"Ed25519","x":"`+jwk.NewJWK("key-b", b).X+`","kid":"key-b","use":"sig","alg":"EdDSA"}]}`, string(data))
	set, err := jwk.ParseJWKS(data)
	require.NoError(t, err)
	require.Equal(t, jwk.KeySet{"key-a": a, "key-b": b}, set)

	got, err := set.Lookup("key-b")
	require.NoError(t, err)
	require.Equal(t, b, got)
	_, err = set.Lookup("key-c")
	require.ErrorIs(t, err, jwk.ErrUnknownKey)

	empty, err := jwk.MarshalJWKS()
	require.NoError(t, err)
	require.JSONEq(t, `{"keys":[]}`, string(empty))
	set, err = jwk.ParseJWKS(empty)
	require.NoError(t, err)
	require.Empty(t, set)
}

func TestParseJWKSAcceptsWhatRFC7517Allows(t *testing.T) {
	pub := testKey(t, "a")
	x := jwk.NewJWK("k", pub).X
	for name, doc := range map[string]string{
		"no use, no alg":    `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"k"}]}`,
		"unknown members":   `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"k","key_ops":["verify"]}],"note":"x"}`,
		"whitespace around": " {\n \"keys\" : [ {\"kid\":\"k\",\"x\":\"" + x + "\",\"crv\":\"Ed25519\",\"kty\":\"OKP\"} ] }\n",
	} {
		t.Run(name, func(t *testing.T) {
			set, err := jwk.ParseJWKS([]byte(doc))
			require.NoError(t, err)
			require.Equal(t, jwk.KeySet{"k": pub}, set)
		})
	}
}

func TestParseJWKSRefuses(t *testing.T) {
	x := jwk.NewJWK("k", testKey(t, "a")).X
	key := func(members string) string { return `{"keys":[{` + members + `}]}` }
	ok := `"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"k"`
	for name, doc := range map[string]string{
		"not json":         `{`,
		"not an object":    `[]`,
		"trailing data":    `{"keys":[]} {}`,
		"no keys":          `{}`,
		"keys null":        `{"keys":null}`,
		"keys not array":   `{"keys":{}}`,
		"keys twice":       `{"keys":[],"keys":[]}`,
		"key not object":   `{"keys":["k"]}`,
		"rsa":              key(`"kty":"RSA","crv":"Ed25519","x":"` + x + `","kid":"k"`),
		"ec":               key(`"kty":"EC","crv":"P-256","x":"` + x + `","kid":"k"`),
		"x25519":           key(`"kty":"OKP","crv":"X25519","x":"` + x + `","kid":"k"`),
		"ed448":            key(`"kty":"OKP","crv":"Ed448","x":"` + x + `","kid":"k"`),
		"no kid":           key(`"kty":"OKP","crv":"Ed25519","x":"` + x + `"`),
		"empty kid":        key(`"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":""`),
		"bad kid":          key(`"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"a b"`),
		"long kid":         key(`"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"` + strings.Repeat("k", 161) + `"`),
		"kid not string":   key(`"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":7`),
		"kid null":         key(`"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":null`),
		"kid twice":        `{"keys":[{` + ok + `},{` + ok + `}]}`,
		"member twice":     key(ok + `,"kid":"j"`),
		"member case":      key(`"KTY":"OKP","crv":"Ed25519","x":"` + x + `","kid":"k"`),
		"no x":             key(`"kty":"OKP","crv":"Ed25519","kid":"k"`),
		"short x":          key(`"kty":"OKP","crv":"Ed25519","x":"` + x[:40] + `","kid":"k"`),
		"long x":           key(`"kty":"OKP","crv":"Ed25519","x":"` + x + `AAAA","kid":"k"`),
		"padded x":         key(`"kty":"OKP","crv":"Ed25519","x":"` + x + `=","kid":"k"`),
		"std base64 x":     key(`"kty":"OKP","crv":"Ed25519","x":"` + strings.NewReplacer("-", "+", "_", "/").Replace(x) + `A","kid":"k"`),
		"private part":     key(ok + `,"d":"` + x + `"`),
		"empty d":          key(ok + `,"d":""`),
		"null d":           key(ok + `,"d":null`),
		"encryption use":   key(ok + `,"use":"enc"`),
		"other alg":        key(ok + `,"alg":"ES256"`),
		"alg none":         key(ok + `,"alg":"none"`),
		"one bad of three": `{"keys":[{` + ok + `},{"kty":"RSA","kid":"r"},{` + strings.Replace(ok, `"kid":"k"`, `"kid":"m"`, 1) + `}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := jwk.ParseJWKS([]byte(doc))
			require.ErrorIs(t, err, jwk.ErrKeySet)
		})
	}
}

func TestMarshalJWKSRefusesWhatParseRefuses(t *testing.T) {
	pub := testKey(t, "a")
	for name, keys := range map[string][]jwk.JWK{
		"rsa":         {{Kty: "RSA", Kid: "k"}},
		"no kid":      {jwk.NewJWK("", pub)},
		"short key":   {jwk.NewJWK("k", pub[:31])},
		"private":     {func() jwk.JWK { k := jwk.NewJWK("k", pub); k.D = "secret"; return k }()},
		"kid twice":   {jwk.NewJWK("k", pub), jwk.NewJWK("k", testKey(t, "b"))},
		"other curve": {func() jwk.JWK { k := jwk.NewJWK("k", pub); k.Crv = "X25519"; return k }()},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := jwk.MarshalJWKS(keys...)
			require.ErrorIs(t, err, jwk.ErrKeySet)
		})
	}
}

func TestPublicKey(t *testing.T) {
	pub := testKey(t, "a")
	got, err := jwk.NewJWK("pcaw_20261123_0123456789abcdef", pub).PublicKey()
	require.NoError(t, err)
	require.Equal(t, pub, got)
	require.True(t, jwk.ValidKeyID("conformance-key-a.seed-is-public.not-a-real-key"))
	require.False(t, jwk.ValidKeyID("k\n"))
}
