package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// Representatives (docs/cases-routes.md, "Representatives"): GET lists
// both sides' representatives to anyone who sees the case, POST appoints
// one for the caller's side, PATCH changes one's label or removes it. The
// side's own party acts (its partner's orchestrator, its immutable agent
// or a member of the side), never a representative or a capability; whom
// it appoints must be an active agent of the side's own partner with the
// side's role, which only the credential store can say, so it is checked
// here before the procedure decides (eligible). Once appointed, a
// representative acts for its side through the one access path,
// standing.actsFor.

// RepresentativeNotEligible is an appointment whose subject is not an
// agent that could act for the side: not an active credential, or agent
// identity, of the side's own partner in the case's tenant and
// environment with the side's agent role. One answer for every reason, so
// it discloses nothing of other tenants' or partners' credentials.
var RepresentativeNotEligible = problem.Code{Name: "representative_not_eligible", Status: http.StatusUnprocessableEntity, Title: "Representative not eligible"}

// representativeView is one representative, as both sides see it.
type representativeView struct {
	RepresentativeID string `json:"representativeId"`
	Side             string `json:"side"`
	Subject          string `json:"subject"`
	Label            string `json:"label"`
	Active           bool   `json:"active"`
	AppointedBy      string `json:"appointedBy"`
	AppointedAt      string `json:"appointedAt"`
	ChangedAt        string `json:"changedAt,omitempty"`
	RemovedAt        string `json:"removedAt,omitempty"`
}

// representativesView lists a case's representatives in appointment
// order, removed ones included.
type representativesView struct {
	CaseID          string               `json:"caseId"`
	Representatives []representativeView `json:"representatives"`
}

// appointBody is the body of POST …/representatives.
type appointBody struct {
	ParticipantID string `json:"participantId"`
	Subject       string `json:"subject"`
	Label         string `json:"label"`
}

// changeBody is the body of PATCH …/representatives: change a
// representative's label, or remove it.
type changeBody struct {
	ParticipantID    string `json:"participantId"`
	RepresentativeID string `json:"representativeId"`
	Action           string `json:"action"`
	Label            string `json:"label"`
}

// The PATCH actions.
const (
	actionChange = "change"
	actionRemove = "remove"
)

func (h *handlers) listRepresentatives(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := representativesView{CaseID: l.Case.ID, Representatives: []representativeView{}}
	for _, r := range l.Case.Representatives {
		v.Representatives = append(v.Representatives, representativeView{
			RepresentativeID: r.ID, Side: string(r.Side), Subject: r.Subject, Label: r.Label, Active: r.Active(),
			AppointedBy: r.AppointedBy, AppointedAt: ts(r.AppointedAt), ChangedAt: ts(r.ChangedAt), RemovedAt: ts(r.RemovedAt),
		})
	}
	private(c, v)
}

// appointRepresentative appoints a representative for the caller's side.
func (h *handlers) appointRepresentative(c *gin.Context) {
	var body appointBody
	if err := httpserver.DecodeJSON(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	switch {
	case !procedure.ValidSubject(body.Subject):
		_ = c.Error(invalidAct("subject must be credential:<publicId> or principal:<partnerId>/<agentId>."))
		return
	case !procedure.ValidRepresentativeLabel(body.Label):
		_ = c.Error(invalidAct("label must be 1 to 120 characters without control characters."))
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	pid, err := h.sideParty(c, cred, l.Case, body.ParticipantID)
	if err != nil {
		_ = c.Error(err)
		return
	}
	if p, ok := l.Case.Participant(pid); ok {
		if err := h.eligible(c.Request.Context(), l.Case, p, auth.Subject(body.Subject)); err != nil {
			_ = c.Error(err)
			return
		}
	}
	act := procedure.Act{Kind: procedure.ActAppointRepresentative, ParticipantID: pid, RepresentativeID: newID("rep_"), Subject: body.Subject, Label: body.Label}
	if v, ok := h.act(c, cred, l.Case, act); ok {
		v.RepresentativeID = act.RepresentativeID
		answered(c, http.StatusCreated, v)
	}
}

// changeRepresentative changes a representative's label, or removes it.
func (h *handlers) changeRepresentative(c *gin.Context) {
	var body changeBody
	if err := httpserver.DecodeJSON(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	act := procedure.Act{RepresentativeID: body.RepresentativeID, Label: body.Label}
	switch {
	case body.RepresentativeID == "":
		_ = c.Error(invalidAct("representativeId is required."))
		return
	case body.Action == actionChange:
		if !procedure.ValidRepresentativeLabel(body.Label) {
			_ = c.Error(invalidAct("label must be 1 to 120 characters without control characters."))
			return
		}
		act.Kind = procedure.ActChangeRepresentative
	case body.Action == actionRemove:
		if body.Label != "" {
			_ = c.Error(invalidAct("label is for action change only; a removal takes none."))
			return
		}
		act.Kind = procedure.ActRemoveRepresentative
	default:
		_ = c.Error(invalidAct("action must be change or remove."))
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	if act.ParticipantID, err = h.sideParty(c, cred, l.Case, body.ParticipantID); err != nil {
		_ = c.Error(err)
		return
	}
	if v, ok := h.act(c, cred, l.Case, act); ok {
		v.RepresentativeID = act.RepresentativeID
		answered(c, http.StatusOK, v)
	}
}

// sideParty resolves who acts, as actor does, and requires the side's
// own authority: a representative acts for its side but never appoints,
// changes or removes representatives, and a capability is for what it was
// issued for (joining, the claimant's acts), not for choosing agents.
func (h *handlers) sideParty(c *gin.Context, cred auth.Credential, cs procedure.Case, participantID string) (string, error) {
	pid, by, err := h.actor(c, cred, cs, anySide, participantID)
	if err != nil {
		return "", err
	}
	if !by.party() {
		return "", forbidden("Only a side's own party (its partner's orchestrator, its agent, or a member of the side) appoints, changes or removes its representatives; this credential acts for participant %s of case %s as a representative or by a capability.", pid, cs.ID)
	}
	return pid, nil
}

// eligible checks that subject could act for participant p once
// appointed: a credential, or an agent identity, of p's own partner in the
// case's tenant and environment, with the side's agent role, active now.
// A participant bound to its immutable agent is acted for by that agent
// alone, so its side appoints no representative for it.
func (h *handlers) eligible(ctx context.Context, cs procedure.Case, p procedure.Participant, subject auth.Subject) error {
	role := auth.SideRole(auth.Side(p.Side))
	notEligible := problem.Newf(RepresentativeNotEligible,
		"%s is not an active %s of partner %s in this case's tenant and environment: a side's representative is an agent of the side's own partner, with the side's role.",
		problem.Clip(string(subject)), role, p.PartnerID)
	if p.AgentID != "" {
		return problem.Newf(RepresentativeNotEligible, "Participant %s is acted for by its immutable agent %s alone; its side appoints no representative for it.", p.ID, p.AgentID)
	}
	if publicID, ok := strings.CutPrefix(string(subject), "credential:"); ok {
		rep, err := h.credentials.Get(ctx, publicID)
		if errors.Is(err, auth.ErrNotFound) {
			return notEligible
		}
		if err != nil {
			return err
		}
		if rep.Tenant != cs.Tenant || string(rep.Environment) != cs.Environment || rep.PartnerID != p.PartnerID ||
			rep.Role != role || !rep.ActiveAt(time.Now()) {
			return notEligible
		}
		return nil
	}
	partnerID, agentID, ok := subject.Principal()
	if !ok || partnerID != p.PartnerID {
		return notEligible
	}
	owner, err := h.credentials.AgentPartner(ctx, cs.Tenant, auth.Environment(cs.Environment), agentID)
	if errors.Is(err, auth.ErrNotFound) || (err == nil && owner != partnerID) {
		return notEligible
	}
	return err
}
