package afteraward

import "time"

// FinalByConsent makes a consent award final on its issue (finalBy
// "consent"): the sides' settlement is their agreement on the award, so
// no post-award request or appeal is left to wait for, and the award is
// executed at once. It records award_final; internal/settlement calls it
// when the reviewer records the settlement.
func FinalByConsent(s State, now time.Time) Outcome {
	next := s.Clone()
	next.FinalAt, next.FinalBy = now.UTC().Truncate(time.Millisecond), "consent"
	return Outcome{State: next, Notes: []Note{note(EventAwardFinal, "")}}
}
