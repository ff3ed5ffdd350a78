package readiness

import (
	"strconv"
	"strings"
)

// Money is an amount of US dollars held in whole cents. Money is never a
// float: fees are computed in integer cents so that a quote cannot drift by a
// rounding error between runs, platforms or languages.
type Money struct {
	cents int64
}

// MoneyFromCents returns the amount of the given number of US cents.
func MoneyFromCents(cents int64) Money {
	return Money{cents: cents}
}

// Cents returns the amount in US cents.
func (m Money) Cents() int64 {
	return m.cents
}

// String returns the amount with exactly two decimals, e.g. "12.50"; report
// texts use it after "USD".
func (m Money) String() string {
	return formatHundredths(m.cents, false)
}

// MarshalJSON encodes the amount as a JSON number in dollars with at most two
// decimals and no trailing zeros (12.5, 7500, 0.01), the same text a float64
// of the amount would encode to, so the HTTP layer may use either.
func (m Money) MarshalJSON() ([]byte, error) {
	return []byte(formatHundredths(m.cents, true)), nil
}

// Percent is a percentage held in basis points (hundredths of a percent), so
// fee rates such as 1.5 % stay exact integers.
type Percent struct {
	basisPoints int64
}

// PercentFromBasisPoints returns the percentage of the given basis points:
// 150 is 1.5 %.
func PercentFromBasisPoints(bp int64) Percent {
	return Percent{basisPoints: bp}
}

// BasisPoints returns the percentage in basis points.
func (p Percent) BasisPoints() int64 {
	return p.basisPoints
}

// String returns the percentage number with two decimals, e.g. "1.50".
func (p Percent) String() string {
	return formatHundredths(p.basisPoints, false)
}

// MarshalJSON encodes the percentage as a JSON number of percent (1.5 for
// 1.5 %), with at most two decimals and no trailing zeros.
func (p Percent) MarshalJSON() ([]byte, error) {
	return []byte(formatHundredths(p.basisPoints, true)), nil
}

// formatHundredths writes n/100 in decimal. With trim, trailing fractional
// zeros and a bare decimal point are dropped, which is the shortest JSON
// number for the value.
func formatHundredths(n int64, trim bool) string {
	sign := ""
	u := uint64(n)
	if n < 0 {
		sign = "-"
		u = uint64(-n) // two's complement keeps math.MinInt64 right
	}
	whole := strconv.FormatUint(u/100, 10)
	frac := u % 100
	fracText := string([]byte{byte('0' + frac/10), byte('0' + frac%10)})
	if trim {
		fracText = strings.TrimRight(fracText, "0")
		if fracText == "" {
			return sign + whole
		}
	}
	return sign + whole + "." + fracText
}
