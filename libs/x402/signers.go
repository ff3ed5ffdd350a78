package x402

import (
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Verifier is VerifyExact with a memory of the signers it has recovered,
// for a facilitator. A facilitator checks each authorization twice: at
// /verify, and again at /settle, since each request stands alone and a
// settlement must never trust an earlier answer. Recovering the signer from
// the signature is the costliest step of a check by far (30 µs on the
// 2-core build machine, ten times the EIP-712 digest), and it is a pure
// function of the digest and the signature: a remembered signer is exactly
// the one recovery would return, so remembering changes no answer, only
// its cost. Every other rule of VerifyExact still runs on every call.
//
// Only successful recoveries are remembered, so garbage signatures cost
// their recovery every time, as before. The memory is two generations of
// at most size entries each (the newer is filled; when it is full it
// becomes the older and the previous older is dropped), so it stays bounded
// under any traffic and keeps at least the last size signers, which at
// thousands of payments a second is seconds: far longer than the
// milliseconds between a /verify and its /settle.
type Verifier struct {
	mu    sync.Mutex
	size  int
	newer map[signedDigest]common.Address
	older map[signedDigest]common.Address
}

// signedDigest is an EIP-712 digest and the 65-byte signature over it, as
// sent: the same signature with v as 0/1 and as 27/28 is two entries.
type signedDigest [32 + crypto.SignatureLength]byte

func signedDigestOf(digest [32]byte, sig []byte) signedDigest {
	var k signedDigest
	copy(k[:32], digest[:])
	copy(k[32:], sig)
	return k
}

// NewVerifier returns a Verifier that remembers at least the last size
// signers it recovered (and at most twice that many).
func NewVerifier(size int) *Verifier {
	size = max(size, 1)
	return &Verifier{size: size, newer: make(map[signedDigest]common.Address, size)}
}

// VerifyExact is x402.VerifyExact, recovering each signature at most once
// while it is remembered.
func (v *Verifier) VerifyExact(req PaymentRequirements, p PaymentPayload, now time.Time) (payer common.Address, reason string, err error) {
	return verifyExact(req, p, now, v.recoverSigner)
}

func (v *Verifier) recoverSigner(digest [32]byte, sig []byte) (common.Address, error) {
	if len(sig) != crypto.SignatureLength {
		return recoverDigest(digest, sig) // its refusal
	}
	key := signedDigestOf(digest, sig)
	if signer, ok := v.remembered(key); ok {
		return signer, nil
	}
	signer, err := recoverDigest(digest, sig)
	if err == nil {
		v.remember(key, signer)
	}
	return signer, err
}

func (v *Verifier) remembered(key signedDigest) (common.Address, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if signer, ok := v.newer[key]; ok {
		return signer, true
	}
	signer, ok := v.older[key]
	return signer, ok
}

func (v *Verifier) remember(key signedDigest, signer common.Address) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.newer) >= v.size {
		v.older, v.newer = v.newer, make(map[signedDigest]common.Address, v.size)
	}
	v.newer[key] = signer
}
