// One-time codes sent to a person's address: the fallback sign-in for
// whoever has no passkey at hand.

package account

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/refusal"
)

// The refusals of one-time codes, in the order the acts check them.
const (
	// CodeCodeTooSoon: a code was sent to the address less than
	// CodeResendAfter ago; the person uses that one.
	CodeCodeTooSoon RefusalCode = "code_too_soon"
	// CodeTooManyCodes: MaxCodesPerHour codes were sent to the address
	// within the hour.
	CodeTooManyCodes RefusalCode = "too_many_codes"
	// CodeCodeMalformed: what was typed is not six digits.
	CodeCodeMalformed RefusalCode = "code_malformed"
	// CodeCodeExpired: no code of the address is live: none was sent, it
	// expired, or it was used.
	CodeCodeExpired RefusalCode = "code_expired"
	// CodeCodeAttemptsExhausted: the live code was typed wrong
	// MaxCodeAttempts times; only a new code signs in.
	CodeCodeAttemptsExhausted RefusalCode = "code_attempts_exhausted"
	// CodeCodeWrong: the code is not the one sent; the attempt counts.
	CodeCodeWrong RefusalCode = "code_wrong"
)

// The code's rules (docs/accounts.md).
const (
	// CodeDigits is the length of a code: six decimal digits.
	CodeDigits = 6
	// CodeLifetime is how long a code signs in.
	CodeLifetime = 10 * time.Minute
	// MaxCodeAttempts bounds the wrong attempts at one code.
	MaxCodeAttempts = 5
	// CodeResendAfter is the least time between two codes to an address.
	CodeResendAfter = time.Minute
	// MaxCodesPerHour bounds the codes sent to an address in an hour, and
	// with MaxCodeAttempts the guesses at its codes: 25 an hour, against a
	// million possible codes.
	MaxCodesPerHour = 5
	// CodeWindow is the hour MaxCodesPerHour counts in.
	CodeWindow = time.Hour
)

// EmailCode is what an address's sign-in codes leave behind: the live
// code's hash, its attempts, and the codes issued within the hour. One is
// kept for every address a code was asked for, whether an account uses
// it or not, so that nothing the page answers tells the two apart.
type EmailCode struct {
	// AccountID is the account the code signs in to; "" when no account
	// uses the address, whose code is never sent and never matches.
	AccountID string
	// Salt and Hash are the code's SHA-256 (hex) over a random salt; Hash
	// is "" once the code is used. The code itself is never kept.
	Salt []byte
	Hash string
	// IssuedAt and ExpiresAt bound the live code; Attempts counts the wrong
	// ones typed at it.
	IssuedAt  time.Time
	ExpiresAt time.Time
	Attempts  int
	// WindowStart and Issued count the codes issued in the CodeWindow from
	// WindowStart.
	WindowStart time.Time
	Issued      int
}

// Live reports whether a code can still sign in at now: issued, unused,
// unexpired (its attempts aside).
func (c EmailCode) Live(now time.Time) bool { return c.Hash != "" && now.Before(c.ExpiresAt) }

// KeepUntil is when nothing of c matters any longer: the live code has
// expired and the window's count has ended.
func (c EmailCode) KeepUntil() time.Time {
	if end := c.WindowStart.Add(CodeWindow); end.After(c.ExpiresAt) {
		return end
	}
	return c.ExpiresAt
}

// ParseCode reads a typed code: six digits, spaces between them allowed
// ("123 456"). Refusals: code_malformed.
func ParseCode(s string) (string, error) {
	code := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	if len(code) != CodeDigits || strings.IndexFunc(code, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return "", refusal.New(CodeCodeMalformed, "a code is the %d digits of the e-mail", CodeDigits)
	}
	return code, nil
}

func codeHash(salt []byte, code string) string {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(code))
	return hex.EncodeToString(h.Sum(nil))
}

// IssueCode replaces prev, the address's state, with a new code for
// accountID ("" when no account uses the address), salted with salt and
// live for CodeLifetime; a new code ends the old one and its attempts.
// Refusals, in order: code_malformed (code is not six digits: the
// caller's mistake), code_too_soon (a live code was issued less than
// CodeResendAfter ago), too_many_codes (MaxCodesPerHour in the window).
func IssueCode(prev EmailCode, accountID, code string, salt []byte, now time.Time) (EmailCode, error) {
	if _, err := ParseCode(code); err != nil {
		return prev, err
	}
	if prev.Live(now) && now.Before(prev.IssuedAt.Add(CodeResendAfter)) {
		return prev, refusal.New(CodeCodeTooSoon, "a code was sent less than a minute ago: use it, or ask again in a minute")
	}
	windowStart, issued := prev.WindowStart, prev.Issued
	if windowStart.IsZero() || !now.Before(windowStart.Add(CodeWindow)) {
		windowStart, issued = now, 0
	}
	if issued >= MaxCodesPerHour {
		return prev, refusal.New(CodeTooManyCodes, "%d codes were sent within the hour: ask again after %s UTC", MaxCodesPerHour,
			windowStart.Add(CodeWindow).UTC().Format("15:04"))
	}
	return EmailCode{
		AccountID: accountID, Salt: append([]byte(nil), salt...), Hash: codeHash(salt, code),
		IssuedAt: now, ExpiresAt: now.Add(CodeLifetime), WindowStart: windowStart, Issued: issued + 1,
	}, nil
}

// Verify checks a typed code against the live one and returns the state
// to keep with the account it signs in to. Unlike the other acts, a wrong
// code changes the state and is still refused: the attempt is counted,
// and the returned state must be kept with the refusal. The code is then
// spent, so it signs in once. Refusals, in order: code_malformed,
// code_expired, code_attempts_exhausted (nothing changes with these
// three), code_wrong (the attempt counted; a code of an address no account
// uses is always wrong).
func (c EmailCode) Verify(typed string, now time.Time) (EmailCode, string, error) {
	code, err := ParseCode(typed)
	if err != nil {
		return c, "", err
	}
	if !c.Live(now) {
		return c, "", refusal.New(CodeCodeExpired, "this code no longer signs in: codes last %d minutes and work once; ask for a new one", int(CodeLifetime/time.Minute))
	}
	if c.Attempts >= MaxCodeAttempts {
		return c, "", refusal.New(CodeCodeAttemptsExhausted, "the code was typed wrong %d times; ask for a new one", MaxCodeAttempts)
	}
	if c.AccountID == "" || subtle.ConstantTimeCompare([]byte(codeHash(c.Salt, code)), []byte(c.Hash)) != 1 {
		c.Attempts++
		if left := MaxCodeAttempts - c.Attempts; left > 0 {
			return c, "", refusal.New(CodeCodeWrong, "this is not the code that was sent; %d attempts left", left)
		}
		return c, "", refusal.New(CodeCodeWrong, "this is not the code that was sent, and it was the last attempt: ask for a new one")
	}
	accountID := c.AccountID
	c.Hash = ""
	return c, accountID, nil
}
