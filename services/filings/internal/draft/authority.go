package draft

// Partner authority over a draft. A credential belongs to one partner; a
// partner acts for the participants whose effective partner it is (their
// partnerId, or the preparing partner when they name none). That relation,
// never a side or principal named in a request, is what the HTTP layer
// checks before every act on a draft, its fee and its grants:
//
//   - a partner with no participant in the draft has no authority over it,
//     and the draft does not exist for it (draft_not_found), exactly as a
//     draft of another tenant;
//   - a partner with a participant reads the draft and its fee, and acts
//     (confirms, records consent, grants, revokes) only for the sides and
//     participants it acts for (forbidden otherwise);
//   - the fee is paid by a partner acting for a claimant, the side that
//     files and pays.
//
// The preparing partner always acts for the initiator, a claimant.

// Involves reports whether partnerID acts for some participant of d.
func (d Draft) Involves(partnerID string) bool {
	return len(d.SidesOf(partnerID)) > 0
}

// SidesOf returns the sides partnerID acts for in d, claimant first, each once.
func (d Draft) SidesOf(partnerID string) []Side {
	var claimant, respondent bool
	for _, p := range d.participants {
		if partnerID == "" || d.effectivePartner(p) != partnerID {
			continue
		}
		if p.Side == SideClaimant {
			claimant = true
		} else {
			respondent = true
		}
	}
	var out []Side
	if claimant {
		out = append(out, SideClaimant)
	}
	if respondent {
		out = append(out, SideRespondent)
	}
	return out
}

// ActsFor reports whether partnerID acts for a participant of side in d.
func (d Draft) ActsFor(partnerID string, side Side) bool {
	for _, s := range d.SidesOf(partnerID) {
		if s == side {
			return true
		}
	}
	return false
}

// AccountOf returns the participant of d that account accountID takes
// part as, if any (an account is at most one participant).
func (d Draft) AccountOf(accountID string) (Participant, bool) {
	for _, p := range d.participants {
		if accountID != "" && p.AccountID == accountID {
			return p, true
		}
	}
	return Participant{}, false
}

// AgentOf returns the participant of d whose immutable agent id is
// agentID, if any.
func (d Draft) AgentOf(agentID string) (Participant, bool) {
	for _, p := range d.participants {
		if agentID != "" && p.AgentID == agentID {
			return p, true
		}
	}
	return Participant{}, false
}

// EffectivePartner returns the partner participant p acts through: its
// partnerId, or the preparing partner when it names none.
func (d Draft) EffectivePartner(p Participant) string { return d.effectivePartner(p) }

// Hosted reports whether p takes part in the opened case through its
// invitation rather than through a partner: a respondent that names no
// partner and no agent and whose confirmation the draft does not hold. On
// the draft the preparing partner acts for it (it names none); on the case
// nobody's credentials do until it joins, and joining binds it: to the
// partner whose agent joins with the invitation, or to the person who
// signs in on the hosted page. The claimant's partner receives its
// invitation to deliver, by design, and can never act for it.
func (d Draft) Hosted(p Participant) bool {
	return p.Side == SideRespondent && p.PartnerID == "" && p.AgentID == "" && p.AccountID == "" && !d.Confirmed(p.ID)
}

// Confirmed reports whether the draft holds participant id's confirmation.
func (d Draft) Confirmed(id string) bool {
	for _, c := range d.confirmations {
		if c.ParticipantID == id {
			return c.Status == ConfirmationConfirmed
		}
	}
	return false
}
