package afterawardflow

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/rails"
)

// What both sides read of a failed transfer says what happened and what
// to do, and never carries the rail's own error text (the facilitator's
// address, say).
func TestAFailedTransferIsDescribedWithoutTheRailsInternals(t *testing.T) {
	internal := `Post "http://facilitator.internal:8085/settle": dial tcp 10.0.0.7:8085: connect: connection refused`
	for err, want := range map[error]string{
		&rails.Refusal{Reason: "insufficient_funds", Detail: internal}: "refused by the rail: insufficient_funds",
		fmt.Errorf("%w: %s", rails.ErrUnavailable, internal):           "the rail did not answer; the transfer may have settled, and the same command asks again",
		fmt.Errorf("%w: %s", rails.ErrNonceUsed, internal):             "the execution's authorization was spent by another one; an operator reconciles it before anything is paid",
		errors.New(internal): "the transfer failed",
	} {
		require.Equal(t, want, failure(err))
	}
}
