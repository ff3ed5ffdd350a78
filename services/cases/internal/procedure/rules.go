package procedure

import (
	"errors"
	"fmt"
	"time"
)

// Windows are the lengths of a case's deadlines. Each runs from the instant
// its stage opens (or the termination request is made).
type Windows struct {
	RespondentJoin          time.Duration
	Answer                  time.Duration
	EvidenceRound           time.Duration
	RebuttalRound           time.Duration
	RecordConfirmation      time.Duration
	TerminationConfirmation time.Duration
	// Warning is how long before a deadline deadline_approaching goes to
	// the sides that still have to act. A stage shorter than twice the
	// warning gets no warning.
	Warning time.Duration
}

// Validate reports a window that is not positive.
func (w Windows) Validate() error {
	for _, d := range []time.Duration{w.RespondentJoin, w.Answer, w.EvidenceRound, w.RebuttalRound, w.RecordConfirmation, w.TerminationConfirmation, w.Warning} {
		if d <= 0 {
			return errors.New("deadline windows must be positive")
		}
	}
	return nil
}

// DeadlineRow is one row of the rules-version deadline table: the windows
// a rules version sets, and the profiles it shortens.
type DeadlineRow struct {
	RulesVersion string
	Windows      Windows
	// Profiles replaces the windows for cases of the named profiles.
	Profiles map[Profile]Windows
}

const day = 24 * time.Hour

// DeadlineTable is the deadline table, one row per rules version. A rules
// version's row never changes once a case is pinned to it: new durations
// are a new rules version. Cases also keep the windows resolved at opening.
var DeadlineTable = []DeadlineRow{
	{
		RulesVersion: "pcourt-rules-2026-11",
		Windows: Windows{
			RespondentJoin:          14 * day,
			Answer:                  14 * day,
			EvidenceRound:           10 * day,
			RebuttalRound:           7 * day,
			RecordConfirmation:      5 * day,
			TerminationConfirmation: 7 * day,
			Warning:                 2 * day,
		},
		Profiles: map[Profile]Windows{
			// The fast and evaluation profiles exist for small, narrow
			// disputes between responsive (often automated) parties.
			ProfileFast: {
				RespondentJoin: 3 * day, Answer: 3 * day, EvidenceRound: 3 * day, RebuttalRound: 2 * day,
				RecordConfirmation: 2 * day, TerminationConfirmation: 2 * day, Warning: 12 * time.Hour,
			},
			ProfileEvaluation: {
				RespondentJoin: 3 * day, Answer: 3 * day, EvidenceRound: 5 * day, RebuttalRound: 2 * day,
				RecordConfirmation: 2 * day, TerminationConfirmation: 2 * day, Warning: 12 * time.Hour,
			},
		},
	},
}

// ErrUnknownRules means a case is pinned to a rules version the deadline
// table does not have: it cannot be run, and is never run on guessed
// deadlines.
var ErrUnknownRules = errors.New("no deadline table for rules version")

// WindowsFor returns the windows of a rules version for a profile.
func WindowsFor(rulesVersion string, profile Profile) (Windows, error) {
	for _, row := range DeadlineTable {
		if row.RulesVersion != rulesVersion {
			continue
		}
		if w, ok := row.Profiles[profile]; ok {
			return w, nil
		}
		return row.Windows, nil
	}
	return Windows{}, fmt.Errorf("%w %q", ErrUnknownRules, rulesVersion)
}
