package draft

import "strconv"

// Procedure is a procedure plan (schemaVersion case-procedure-plan-v2). The
// canonical routes call it the schedule.
type Procedure struct {
	Profile                    Profile
	AnswerRequired             bool
	EvidenceRounds             int  // 1 to 3
	RebuttalRounds             int  // 0 to 3
	FilingsPerSidePerStage     int  // 1 to 3
	RecordConfirmationRequired bool // always true in a prepared draft
}

// The bounds of the procedure plan, inclusive.
const (
	MinEvidenceRounds = 1
	MaxEvidenceRounds = 3
	MinRebuttalRounds = 0
	MaxRebuttalRounds = 3
	MinFilingsPerSide = 1
	MaxFilingsPerSide = 3
)

// profilePlans are the fixed plans of the named profiles. custom_bounded has
// none: its values are the caller's, within the bounds.
var profilePlans = []Procedure{
	// Answer, two evidence rounds, one rebuttal, two filings per side and stage.
	{Profile: ProfileStandard, AnswerRequired: true, EvidenceRounds: 2, RebuttalRounds: 1, FilingsPerSidePerStage: 2, RecordConfirmationRequired: true},
	// No answer stage, one evidence round, no rebuttal, one filing each.
	{Profile: ProfileFast, AnswerRequired: false, EvidenceRounds: 1, RebuttalRounds: 0, FilingsPerSidePerStage: 1, RecordConfirmationRequired: true},
	// Answer, then one round in which each side files everything (up to three filings).
	{Profile: ProfileSingleRound, AnswerRequired: true, EvidenceRounds: 1, RebuttalRounds: 0, FilingsPerSidePerStage: 3, RecordConfirmationRequired: true},
	// The sides build one joint record, then each may comment on it once.
	{Profile: ProfileJointRecord, AnswerRequired: false, EvidenceRounds: 1, RebuttalRounds: 1, FilingsPerSidePerStage: 1, RecordConfirmationRequired: true},
	// A narrow evaluation: one round of one filing each, decided on the question.
	{Profile: ProfileEvaluation, AnswerRequired: false, EvidenceRounds: 1, RebuttalRounds: 0, FilingsPerSidePerStage: 1, RecordConfirmationRequired: true},
}

// ProfileDefaults returns the fixed plan of a named profile, and false for
// custom_bounded and unknown profiles.
func ProfileDefaults(p Profile) (Procedure, bool) {
	for _, plan := range profilePlans {
		if plan.Profile == p {
			return plan, true
		}
	}
	return Procedure{}, false
}

// resolveProcedure validates a requested plan and returns the plan the draft
// takes. prefix is the JSON name of the object ("procedure" or "schedule").
//
// A named profile's plan is fixed: sending only the profile (every other
// value zero) takes it, and values that are sent must equal it. RecordConfirmationRequired
// is always true; false is read as "not sent" because the Go zero value
// cannot tell the two apart (the HTTP layer refuses an explicit false).
func resolveProcedure(prefix string, in Procedure) (Procedure, error) {
	if in.Profile == "" {
		return Procedure{}, invalid(prefix+".profile", "is required")
	}
	if !in.Profile.Valid() {
		return Procedure{}, invalid(prefix+".profile", "must be one of "+joinList(profiles))
	}
	if plan, named := ProfileDefaults(in.Profile); named {
		if !in.AnswerRequired && in.EvidenceRounds == 0 && in.RebuttalRounds == 0 && in.FilingsPerSidePerStage == 0 {
			return plan, nil
		}
		fixed := " for profile " + string(in.Profile) + " (send only the profile to take its plan, or use custom_bounded)"
		switch {
		case in.AnswerRequired != plan.AnswerRequired:
			return Procedure{}, invalid(prefix+".answerRequired", "must be "+strconv.FormatBool(plan.AnswerRequired)+fixed)
		case in.EvidenceRounds != plan.EvidenceRounds:
			return Procedure{}, invalid(prefix+".evidenceRounds", "must be "+strconv.Itoa(plan.EvidenceRounds)+fixed)
		case in.RebuttalRounds != plan.RebuttalRounds:
			return Procedure{}, invalid(prefix+".rebuttalRounds", "must be "+strconv.Itoa(plan.RebuttalRounds)+fixed)
		case in.FilingsPerSidePerStage != plan.FilingsPerSidePerStage:
			return Procedure{}, invalid(prefix+".filingsPerSidePerStage", "must be "+strconv.Itoa(plan.FilingsPerSidePerStage)+fixed)
		}
		return plan, nil
	}
	bounds := []struct {
		field     string
		v, lo, hi int
	}{
		{"evidenceRounds", in.EvidenceRounds, MinEvidenceRounds, MaxEvidenceRounds},
		{"rebuttalRounds", in.RebuttalRounds, MinRebuttalRounds, MaxRebuttalRounds},
		{"filingsPerSidePerStage", in.FilingsPerSidePerStage, MinFilingsPerSide, MaxFilingsPerSide},
	}
	for _, b := range bounds {
		if b.v < b.lo || b.v > b.hi {
			return Procedure{}, invalid(prefix+"."+b.field, "must be "+strconv.Itoa(b.lo)+" to "+strconv.Itoa(b.hi)+" for profile custom_bounded")
		}
	}
	in.RecordConfirmationRequired = true
	return in, nil
}
