package httpapi_test

import (
	"testing"

	"github.com/pcourt/pcourt/services/cases/internal/afterawardflow"
)

// refunds is the stack's x402r rail: none yet.
func (s *stack) refunds(t testing.TB) afterawardflow.Refunds { return nil }
