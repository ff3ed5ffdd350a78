package refusal_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/refusal"
)

type (
	tribunalCode string
	evidenceCode string
)

func TestARefusalMatchesItsCodeInItsDomainOnly(t *testing.T) {
	err := fmt.Errorf("deciding: %w", refusal.New(tribunalCode("case_closed"), "case %s was terminated", "cs_1"))
	require.EqualError(t, err, "deciding: case_closed: case cs_1 was terminated")
	require.ErrorIs(t, err, &refusal.Error[tribunalCode]{Code: "case_closed"}, "any detail, the same code")
	require.NotErrorIs(t, err, &refusal.Error[tribunalCode]{Code: "award_not_issued"})
	require.NotErrorIs(t, err, &refusal.Error[evidenceCode]{Code: "case_closed"}, "another domain's code of the same name is another refusal")

	var e *refusal.Error[evidenceCode]
	require.False(t, errors.As(err, &e))
	require.Equal(t, "stage_closed", (&refusal.Error[tribunalCode]{Code: "stage_closed"}).Error())
}
