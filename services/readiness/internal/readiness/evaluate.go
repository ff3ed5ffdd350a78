package readiness

import (
	"slices"
	"strings"
	"time"
)

// Report is the readiness report, one field per member of the spec's `data`
// object. The JSON tags give the spec's names; the HTTP layer may encode a
// Report as is or through its own response shape.
type Report struct {
	SupportedLane bool `json:"supportedLane"`
	// ReadyToFile is SupportedLane, a proposed case track, and every
	// applicable requirement satisfied.
	ReadyToFile bool `json:"readyToFile"`
	Lane        Lane `json:"lane"`
	// Composition is nil when no case track was proposed.
	Composition *Composition `json:"composition"`
	// FilingFee is nil when no case track was proposed.
	FilingFee *FilingFee `json:"filingFee"`
	// Requirements lists the applicable requirements in table order.
	Requirements        []Requirement       `json:"requirements"`
	CorpusCompatibility CorpusCompatibility `json:"corpusCompatibility"`
	Timing              Timing              `json:"timing"`
	Disclaimers         Disclaimers         `json:"disclaimers"`
}

// Composition is who would likely decide the case, and why.
type Composition struct {
	Value  CompositionValue  `json:"value"`
	Reason CompositionReason `json:"reason"`
}

// FilingFee is the quoted filing fee. It is a quote: the report collects
// nothing toward it.
type FilingFee struct {
	// Currency is always "USD".
	Currency          string  `json:"currency"`
	AmountUsd         Money   `json:"amountUsd"`
	Tier              FeeTier `json:"tier"`
	Percent           Percent `json:"percent"`
	FloorUsd          Money   `json:"floorUsd"`
	PanelSurchargeUsd Money   `json:"panelSurchargeUsd"`
	CollectionNote    string  `json:"collectionNote"`
}

// Requirement is one applicable requirement and whether the reported facts
// satisfy it; Detail says what to do next.
type Requirement struct {
	Code      RequirementCode `json:"code"`
	Satisfied bool            `json:"satisfied"`
	Detail    string          `json:"detail"`
}

// CorpusCompatibility says whether the reported corpus fits the remedy.
type CorpusCompatibility struct {
	Compatible bool   `json:"compatible"`
	Detail     string `json:"detail"`
}

// Timing carries the reported escrow window back in UTC with any warning.
type Timing struct {
	EscrowWindowEndsAt *time.Time `json:"escrowWindowEndsAt"`
	Warning            *string    `json:"warning"`
}

// Disclaimers states what the report is not. The four booleans are always
// false.
type Disclaimers struct {
	CaseFiled             bool   `json:"caseFiled"`
	MeritsAssessed        bool   `json:"meritsAssessed"`
	LegalAdvice           bool   `json:"legalAdvice"`
	ReportedFactsVerified bool   `json:"reportedFactsVerified"`
	Statement             string `json:"statement"`
}

// Trace names the rules that decided a report, for logs and tests; it is not
// part of the report body. Empty strings mean no rule of that kind matched.
type Trace struct {
	LaneRule    string
	LaneLimit   string
	Composition CompositionReason
	CorpusRule  string
	TimingRule  string
}

// Evaluate applies rules to req at the instant now and returns the report.
// It is pure: the same rules, request and instant give an equal report.
func Evaluate(rules Rules, req Request, now time.Time) Report {
	report, _ := EvaluateWithTrace(rules, req, now)
	return report
}

// EvaluateWithTrace is [Evaluate] that also names the rules that decided the
// report.
func EvaluateWithTrace(rules Rules, req Request, now time.Time) (Report, Trace) {
	table := rules.table
	var trace Trace
	f := facts{req: req, window: windowState(req, table.TimingHorizonHours, now)}
	f.corpusCovers = req.corpusReported && req.corpus.cents >= req.amountInDispute.cents

	lane := LaneStandard
	procedure := ProcedureStandard
	for _, r := range table.Lanes {
		if r.When.matches(f) {
			lane, procedure, trace.LaneRule = r.Lane, r.Procedure, r.Code
			break
		}
	}
	f.lane = lane

	allowedRemedies, allowedRails := allowances(table, req)
	values := placeholderValues{
		"{amountInDisputeUsd}", req.amountInDispute.String(),
		"{corpusAmountUsd}", orNone(req.corpusReported, req.corpus.String()),
		"{caseTrack}", orNone(req.caseTrack != "", string(req.caseTrack)),
		"{remedy}", string(req.remedy),
		"{settlementRail}", string(req.settlementRail),
		"{fastTrackClaimClass}", orNone(req.claimClass != "", string(req.claimClass)),
		"{allowedRemedies}", joinOr(allowedRemedies),
		"{allowedRails}", joinOr(allowedRails),
		"{escrowWindowEndsAt}", orNone(req.escrowWindowReported, req.escrowWindowEndsAt.Format(time.RFC3339Nano)),
		"{lane}", string(lane),
		"{procedure}", string(procedure),
		"{rulesVersion}", table.Version,
		"{rulesHash}", rules.hash,
	}
	render := values.render

	laneSupported := true
	for _, l := range table.LaneLimits {
		if l.When.matches(f) {
			laneSupported = false
			trace.LaneLimit = l.Code
			values = append(values, "{laneLimit}", render(l.Detail))
			render = values.render
			break
		}
	}

	report := Report{
		SupportedLane: laneSupported,
		Lane:          lane,
		Requirements:  []Requirement{},
		Disclaimers:   Disclaimers{Statement: render(table.Statement)},
	}

	if req.caseTrack != "" {
		for _, c := range table.Compositions {
			if !c.When.matches(f) {
				continue
			}
			trace.Composition = c.Reason
			report.Composition = &Composition{Value: c.Value, Reason: c.Reason}
			if i := slices.IndexFunc(table.Fees, func(s FeeSchedule) bool { return s.Tier == c.Tier }); i >= 0 {
				report.FilingFee = quote(table.Fees[i], req.amountInDispute)
			}
			break
		}
	}

	for _, c := range table.Corpus {
		if c.When.matches(f) {
			trace.CorpusRule = c.Code
			report.CorpusCompatibility = CorpusCompatibility{Compatible: c.Compatible, Detail: render(c.Detail)}
			break
		}
	}

	allSatisfied := true
	for _, r := range table.Requirements {
		if !r.applies(f) {
			continue
		}
		ok := r.Check.holds(checkInput{
			req:           req,
			table:         table,
			laneSupported: laneSupported,
			corpus:        report.CorpusCompatibility.Compatible,
			remedies:      allowedRemedies,
			rails:         allowedRails,
		})
		detail := r.Unsatisfied
		if ok {
			detail = r.Satisfied
		}
		allSatisfied = allSatisfied && ok
		report.Requirements = append(report.Requirements, Requirement{Code: r.Code, Satisfied: ok, Detail: render(detail)})
	}

	if req.escrowWindowReported {
		end := req.escrowWindowEndsAt
		report.Timing.EscrowWindowEndsAt = &end
	}
	for _, r := range table.Timing {
		if r.When.matches(f) {
			trace.TimingRule = r.Code
			if r.Warning != "" {
				w := render(r.Warning)
				report.Timing.Warning = &w
			}
			break
		}
	}

	report.ReadyToFile = laneSupported && req.caseTrack != "" && report.FilingFee != nil && allSatisfied
	return report, trace
}

// facts is what matches are evaluated against: the request and what the
// evaluator derived from it.
type facts struct {
	req          Request
	lane         Lane // "" while the lane is being decided
	window       EscrowWindowState
	corpusCovers bool
}

func (m Match) matches(f facts) bool {
	r := f.req
	switch {
	case !within(m.ClaimantTypes, r.claimantType),
		!within(m.RespondentTypes, r.respondentType),
		!within(m.Lanes, f.lane),
		len(m.CaseTracks) > 0 && (r.caseTrack == "" || !slices.Contains(m.CaseTracks, r.caseTrack)),
		!within(m.Remedies, r.remedy),
		len(m.ClaimClasses) > 0 && (r.claimClass == "" || !slices.Contains(m.ClaimClasses, r.claimClass)),
		!within(m.SettlementRails, r.settlementRail),
		m.AmountAboveUsd != nil && r.amountInDispute.cents <= m.AmountAboveUsd.cents,
		m.AmountAtMostUsd != nil && r.amountInDispute.cents > m.AmountAtMostUsd.cents,
		m.CorpusReported != nil && *m.CorpusReported != r.corpusReported,
		m.CorpusCoversAmount != nil && *m.CorpusCoversAmount != f.corpusCovers,
		!within(m.EscrowWindow, f.window):
		return false
	}
	return true
}

// within reports whether v is in the constraint list; an empty list
// constrains nothing.
func within[E comparable](list []E, v E) bool {
	return len(list) == 0 || slices.Contains(list, v)
}

func (r RequirementRule) applies(f facts) bool {
	if len(r.When) == 0 {
		return true
	}
	return slices.ContainsFunc(r.When, func(m Match) bool { return m.matches(f) })
}

type checkInput struct {
	req           Request
	table         RuleTable
	laneSupported bool
	corpus        bool
	remedies      []Remedy
	rails         []SettlementRail
}

func (c Check) holds(in checkInput) bool {
	r := in.req
	switch c {
	case CheckLaneSupported:
		return in.laneSupported
	case CheckCaseTrackProposed:
		return r.caseTrack != ""
	case CheckFastTrackEligible:
		return r.claimClass != "" && r.amountInDispute.cents <= in.table.FastTrackCeilingUsd.cents
	case CheckRemedyAllowed:
		return slices.Contains(in.remedies, r.remedy)
	case CheckSettlementRailAllowed:
		return slices.Contains(in.rails, r.settlementRail)
	case CheckCorpusCompatible:
		return in.corpus
	case CheckMutualConsent:
		return r.mutualConsent
	case CheckAuthorityToBind:
		return r.authorityToBind
	case CheckClaimantEvidence:
		return r.claimantEvidenceReady
	case CheckRespondentEvidence:
		return r.respondentEvidenceReady
	case CheckMicroClaimsTierConsent:
		return r.microClaimsTierConsent
	case CheckRemedialJurisdiction:
		return r.remedialJurisdiction
	}
	return false // an unknown check never satisfies; Validate refuses it
}

// allowances returns the remedies the claim may seek and the rails that can
// carry out its award, as CheckRemedyAllowed and CheckSettlementRailAllowed
// define them.
func allowances(table RuleTable, req Request) ([]Remedy, []SettlementRail) {
	allowedRemedies := remedies
	var classRails []SettlementRail
	if req.claimClass != "" {
		if i := slices.IndexFunc(table.ClaimClasses, func(c ClaimClassRule) bool { return c.Class == req.claimClass }); i >= 0 {
			allowedRemedies = table.ClaimClasses[i].Remedies
			classRails = table.ClaimClasses[i].Rails
		}
	}
	switch {
	case len(classRails) > 0:
		return allowedRemedies, classRails
	case req.remedy == RemedyCorpusAllocation:
		return allowedRemedies, table.AllocationRails
	default:
		return allowedRemedies, rails
	}
}

// quote computes the fee in integer cents: the percentage is rounded half up
// to the cent, raised to the floor, and the panel surcharge is added.
func quote(s FeeSchedule, amount Money) *FilingFee {
	proportional := (amount.cents*s.Percent.basisPoints + 5_000) / 10_000
	return &FilingFee{
		Currency:          "USD",
		AmountUsd:         Money{cents: max(proportional, s.FloorUsd.cents) + s.PanelSurchargeUsd.cents},
		Tier:              s.Tier,
		Percent:           s.Percent,
		FloorUsd:          s.FloorUsd,
		PanelSurchargeUsd: s.PanelSurchargeUsd,
		CollectionNote:    s.CollectionNote,
	}
}

func windowState(req Request, horizonHours int, now time.Time) EscrowWindowState {
	if !req.escrowWindowReported {
		return WindowAbsent
	}
	end := req.escrowWindowEndsAt
	switch {
	case !end.After(now):
		return WindowElapsed
	case !end.After(now.Add(time.Duration(horizonHours) * time.Hour)):
		return WindowClosing
	default:
		return WindowOpen
	}
}

func orNone(present bool, s string) string {
	if !present {
		return "none"
	}
	return s
}

// joinOr writes a list as prose: "a", "a or b", "a, b or c".
func joinOr[E ~string](values []E) string {
	switch n := len(values); n {
	case 0:
		return "none"
	case 1:
		return string(values[0])
	default:
		return joinList(values[:n-1], ", ") + " or " + string(values[n-1])
	}
}

// placeholderValues are the values of the placeholders of one report, as
// name, value pairs.
type placeholderValues []string

// render substitutes the placeholders of a table text. Validate has checked
// that every {…} in a text is a known placeholder; one without a value here
// ({laneLimit} where no lane limit applies) stays as written. Values are not
// scanned again.
func (v placeholderValues) render(text string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(text, '{')
		if open < 0 {
			break
		}
		closing := strings.IndexByte(text[open:], '}')
		if closing < 0 {
			break
		}
		name := text[open : open+closing+1]
		b.WriteString(text[:open])
		b.WriteString(v.value(name))
		text = text[open+closing+1:]
	}
	if b.Len() == 0 {
		return text // nothing written before the rest: the rest is the result, not copied
	}
	b.WriteString(text)
	return b.String()
}

func (v placeholderValues) value(name string) string {
	for i := 0; i+1 < len(v); i += 2 {
		if v[i] == name {
			return v[i+1]
		}
	}
	return name
}
