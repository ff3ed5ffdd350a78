// Confirming a person's address: the only proof that the address is the
// person's. A sign-up does not prove it, so an address counts only once
// a code sent to it was typed back by the signed-in account: until then
// it is not claimed (another sign-up may give it too) and no sign-in
// code reaches the account through it. Confirming claims the address for
// the account, once in a tenant and environment: the first account to
// confirm it holds it, and the address is email_taken to every other.
//
// A confirmation's codes are the sign-in codes' (IssueCode, Verify:
// six digits, ten minutes, once, five attempts, one a minute and five an
// hour), kept per address and account, so another account naming the
// same address neither ends nor rations this one's codes.
//
// The refusals, in order. Asking for a code: no_account_address (not a
// person's account), email_already_confirmed (CheckConfirmable); then
// email_taken (another account confirmed the address: the store's
// claim); then code_too_soon, too_many_codes (IssueCode). Typing it:
// no_account_address, email_already_confirmed; code_malformed,
// code_expired, code_attempts_exhausted, code_wrong (Verify, the attempt
// counted); then email_taken (another account confirmed the address
// first: the claim and the code's use are one step in the store, so
// this changes nothing and the code still works, for nothing).

package account

import (
	"time"

	"github.com/pcourt/pcourt/libs/refusal"
)

// The refusals of a confirmation, beside the codes' (code.go).
const (
	// CodeNoAccountAddress: an account that is no person's has no address
	// to confirm.
	CodeNoAccountAddress RefusalCode = "no_account_address"
	// CodeEmailAlreadyConfirmed: the account's address is confirmed
	// already; nothing is left to do.
	CodeEmailAlreadyConfirmed RefusalCode = "email_already_confirmed"
)

// CheckConfirmable says whether the account may ask for, or type, a code
// confirming its address. Refusals, in order: no_account_address,
// email_already_confirmed.
func (a Account) CheckConfirmable() error {
	if !a.IsPerson() || a.Email == "" {
		return refusal.New(CodeNoAccountAddress, "this account has no e-mail address to confirm")
	}
	if !a.EmailVerifiedAt.IsZero() {
		return refusal.New(CodeEmailAlreadyConfirmed, "the address %s was confirmed on %s UTC already", a.Email,
			a.EmailVerifiedAt.UTC().Format("2 January 2006, 15:04"))
	}
	return nil
}

// ConfirmEmail records the address's confirmation: the code sent to it
// was typed back (EmailCode.Verify, for this account) and the address
// claimed for the account (the store), both before. An address confirmed
// already keeps its first instant, so a confirmation repeated after an
// interruption changes nothing. Refusals: no_account_address.
func (a Account) ConfirmEmail(now time.Time) (Account, error) {
	if !a.IsPerson() || a.Email == "" {
		return a, refusal.New(CodeNoAccountAddress, "this account has no e-mail address to confirm")
	}
	if a.EmailVerifiedAt.IsZero() {
		a.EmailVerifiedAt = now
	}
	return a, nil
}
