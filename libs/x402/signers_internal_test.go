package x402

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"
)

// signed returns a digest of msg, a signature over it by a new key, and
// the key's address.
func signed(t *testing.T, msg string) ([32]byte, []byte, common.Address) {
	t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	digest := crypto.Keccak256Hash([]byte(msg))
	sig, err := crypto.Sign(digest[:], key)
	require.NoError(t, err)
	return digest, sig, crypto.PubkeyToAddress(key.PublicKey)
}

func TestVerifierRemembersOnlyRecoveredSigners(t *testing.T) {
	v := NewVerifier(8)
	digest, sig, signer := signed(t, "a payment")

	got, err := v.recoverSigner(digest, sig)
	require.NoError(t, err)
	require.Equal(t, signer, got)
	remembered, ok := v.remembered(signedDigestOf(digest, sig))
	require.True(t, ok, "a recovered signer is remembered")
	require.Equal(t, signer, remembered)

	// The same signature over another digest is another entry: it
	// recovers to someone else, never to the remembered signer.
	other := crypto.Keccak256Hash([]byte("another payment"))
	got, err = v.recoverSigner(other, sig)
	if err == nil {
		require.NotEqual(t, signer, got)
	}

	// Another signature over the same digest recovers its own signer, not
	// the remembered one: the memory is keyed by digest and signature.
	_, otherSig, otherSigner := signed(t, "a payment")
	got, err = v.recoverSigner(digest, otherSig)
	require.NoError(t, err)
	require.Equal(t, otherSigner, got)
	require.NotEqual(t, signer, got)

	// A signature that does not recover (s above the curve order's half,
	// as the chain refuses it) is refused every time and never remembered.
	highS := append([]byte(nil), sig...)
	copy(highS[32:64], crypto.S256().Params().N.Bytes())
	_, err = v.recoverSigner(digest, highS)
	require.ErrorIs(t, err, ErrInvalidSignature)
	_, ok = v.remembered(signedDigestOf(digest, highS))
	require.False(t, ok)
	_, err = v.recoverSigner(digest, highS)
	require.ErrorIs(t, err, ErrInvalidSignature)

	// A signature of the wrong length is refused before any lookup.
	_, err = v.recoverSigner(digest, sig[:64])
	require.ErrorIs(t, err, ErrInvalidSignature)
}

func TestVerifierMemoryIsBounded(t *testing.T) {
	const size = 4
	v := NewVerifier(size)
	type entry struct {
		digest [32]byte
		sig    []byte
	}
	var all []entry
	for i := range 5 * size {
		digest, sig, _ := signed(t, string(rune('a'+i)))
		_, err := v.recoverSigner(digest, sig)
		require.NoError(t, err)
		all = append(all, entry{digest, sig})
		require.LessOrEqual(t, len(v.newer)+len(v.older), 2*size)
	}
	for _, e := range all[len(all)-size:] {
		_, ok := v.remembered(signedDigestOf(e.digest, e.sig))
		require.True(t, ok, "the last size signers are remembered")
	}
	_, ok := v.remembered(signedDigestOf(all[0].digest, all[0].sig))
	require.False(t, ok, "the oldest are forgotten")
}
