package procedure

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Representatives: a side appoints, changes and removes the agents that
// act for it beside its own authority. The case record is their one
// source of truth, so a change and its event are one store step, and a
// removed representative loses its authority with the very next request.
//
// The procedure keeps the rules it can decide on the record alone (the
// shape of a subject and label, one appointment per subject, the limit per
// side, a side changing only its own). Who may appoint (the side's own
// party, never a representative) and whom (a credential or agent identity
// of the side's own partner, with the side's agent role) need the
// credential store: they are the HTTP layer's access checks
// (docs/cases-routes.md, "Representatives").

// MaxRepresentativesPerSide bounds a side's representatives at any one
// time: each is read on every request that may act for the side.
const MaxRepresentativesPerSide = 10

// MaxRepresentativeLabelRunes bounds a representative's label.
const MaxRepresentativeLabelRunes = 120

// Representative is one representative of a side. It has one scope: it
// acts for its side as a member of that side does, and never appoints
// others.
type Representative struct {
	ID   string // "rep_…", minted by the caller
	Side Side
	// Subject is who represents, as a membership subject of libs/auth:
	// "credential:<publicId>" or "principal:<partnerId>/<agentId>".
	Subject string
	// Label is how the sides show the representative (1 to 120 characters).
	Label string
	// AppointedBy is the participant whose side appointed it.
	AppointedBy string
	AppointedAt time.Time
	ChangedAt   time.Time // zero until its label changed
	RemovedAt   time.Time // zero while it represents the side
}

// Active reports whether the representative still acts for its side.
func (r Representative) Active() bool { return r.RemovedAt.IsZero() }

// ActiveRepresentatives are the case's representatives that act for a
// side now, in appointment order.
func (c Case) ActiveRepresentatives() []Representative {
	var out []Representative
	for _, r := range c.Representatives {
		if r.Active() {
			out = append(out, r)
		}
	}
	return out
}

func (c Case) representative(id string) (int, bool) {
	i := slices.IndexFunc(c.Representatives, func(r Representative) bool { return r.ID == id })
	return i, i >= 0
}

// representativePrecondition checks step 7 of Decide for the
// representatives' acts.
func (c Case) representativePrecondition(a Act, p Participant) error {
	if a.Kind == ActAppointRepresentative {
		if _, ok := c.representative(a.RepresentativeID); ok {
			return refuse(CodeInvalidAct, "representative %s already exists", a.RepresentativeID)
		}
		for _, r := range c.ActiveRepresentatives() {
			if r.Subject == a.Subject {
				return refuse(CodeRepresentativeExists, "%s already represents the %s side of case %s as %s", a.Subject, r.Side, c.ID, r.ID)
			}
		}
		n := 0
		for _, r := range c.ActiveRepresentatives() {
			if r.Side == p.Side {
				n++
			}
		}
		if n >= MaxRepresentativesPerSide {
			return refuse(CodeRepresentativeLimitReached, "the %s side has %d representatives, the most a side may have; remove one first", p.Side, n)
		}
		return nil
	}
	i, ok := c.representative(a.RepresentativeID)
	if !ok {
		return refuse(CodeRepresentativeNotFound, "case %s has no representative %s", c.ID, a.RepresentativeID)
	}
	r := c.Representatives[i]
	if r.Side != p.Side {
		return refuse(CodeWrongSide, "representative %s represents the %s side; only that side changes or removes it", r.ID, r.Side)
	}
	if !r.Active() {
		return refuse(CodeRepresentativeNotFound, "representative %s was removed at %s", r.ID, Timestamp(r.RemovedAt))
	}
	return nil
}

// The representatives' row effects.
var (
	doAppoint = func(c *Case, a Act, p Participant, now time.Time) {
		c.Representatives = append(c.Representatives, Representative{
			ID: a.RepresentativeID, Side: p.Side, Subject: a.Subject, Label: a.Label, AppointedBy: p.ID, AppointedAt: now,
		})
	}
	doChangeRepresentative = func(c *Case, a Act, _ Participant, now time.Time) {
		if i, ok := c.representative(a.RepresentativeID); ok {
			c.Representatives[i].Label, c.Representatives[i].ChangedAt = a.Label, now
		}
	}
	doRemoveRepresentative = func(c *Case, a Act, _ Participant, now time.Time) {
		if i, ok := c.representative(a.RepresentativeID); ok {
			c.Representatives[i].RemovedAt = now
		}
	}
)

// ValidSubject reports whether s is a membership subject a representative
// may have: "credential:<publicId>" or "principal:<partnerId>/<agentId>",
// each id 1 to 64 characters of A-Z a-z 0-9 . _ : -.
func ValidSubject(s string) bool {
	if id, ok := strings.CutPrefix(s, "credential:"); ok {
		return validID(id)
	}
	rest, ok := strings.CutPrefix(s, "principal:")
	if !ok {
		return false
	}
	partnerID, agentID, ok := strings.Cut(rest, "/")
	return ok && validID(partnerID) && validID(agentID)
}

// ValidRepresentativeLabel reports whether s is 1 to 120 characters without control
// characters.
func ValidRepresentativeLabel(s string) bool {
	n := utf8.RuneCountInString(s)
	if n == 0 || n > MaxRepresentativeLabelRunes || !utf8.ValidString(s) || strings.TrimSpace(s) == "" {
		return false
	}
	return !strings.ContainsFunc(s, unicode.IsControl)
}
