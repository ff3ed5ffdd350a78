package afteraward

import "time"

// Windows are the post-award deadlines of a rules version. Requests and
// Appeals run from the served award's issue; AppealFee from an appeal's
// filing, AppealAnswer from the opening of its briefing.
type Windows struct {
	// Requests is how long a side may ask for a correction, an
	// interpretation or an additional award.
	Requests time.Duration
	// Appeals is how long a side may appeal; zero: the rules allow no
	// appeal. The award becomes final when both windows lapsed with
	// nothing pending.
	Appeals time.Duration
	// AppealFee is how long an appeal fee collected with x402 may stay
	// unpaid before the appeal lapses.
	AppealFee time.Duration
	// AppealAnswer is how long the other side may answer an appeal.
	AppealAnswer time.Duration
}

// AppealFeeSchedule is a rules version's appeal fee: the percentage of the
// amount claimed (basis points, rounded half up to the cent), raised to
// the floor, in USD minor units.
type AppealFeeSchedule struct {
	PercentBasisPoints int64
	FloorMinor         int64
}

const day = 24 * time.Hour

// WindowsByRules are the post-award windows of each rules version. A
// version's row never changes once a case is pinned to it.
var WindowsByRules = map[string]Windows{
	"pcourt-rules-2026-11": {Requests: 14 * day, Appeals: 14 * day, AppealFee: 7 * day, AppealAnswer: 14 * day},
}

// AppealFeesByRules are the appeal fee schedules of each rules version:
// for pcourt-rules-2026-11 the single arbiter's filing fee (3 %, at least
// USD 50), since one appellate reviewer hears the appeal.
var AppealFeesByRules = map[string]AppealFeeSchedule{
	"pcourt-rules-2026-11": {PercentBasisPoints: 300, FloorMinor: 5_000},
}
