package httpapi

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// The website's case list (GET /api/disputes): the caller's cases, newest
// first, in cursor pages, filtered by status and opening date. Which
// cases are the caller's is decided by the same check as a case's own
// routes (visible): the store's index only proposes candidates.

const (
	defaultCaseListLimit = 20
	maxCaseListLimit     = 100
)

type caseListView struct {
	Cases      []caseSummaryView `json:"cases"`
	NextCursor *string           `json:"nextCursor"`
}

// caseSummaryView is a case as the list shows it; GET /api/disputes/{id}
// has the rest.
type caseSummaryView struct {
	CaseID         string   `json:"caseId"`
	ExternalCaseID string   `json:"externalCaseId"`
	Status         string   `json:"status"`
	CaseMode       string   `json:"caseMode"`
	OpenedAt       string   `json:"openedAt"`
	ClosedAt       string   `json:"closedAt,omitempty"`
	YourSides      []string `json:"yourSides"`
	LastSequence   int64    `json:"lastSequence"`
}

// listCases answers one page: ?status=<case status>,
// ?openedAfter=<RFC 3339> (inclusive), ?openedBefore=<RFC 3339>
// (exclusive), ?cursor=<nextCursor of the previous page>, ?limit=1..100.
// A page may hold fewer cases than limit while nextCursor is set (the
// status filter reads a bounded number of candidates per page): follow
// nextCursor until it is null.
func (h *handlers) listCases(c *gin.Context) {
	cred, ok := auth.CredentialFrom(c.Request.Context())
	if !ok {
		_ = c.Error(problem.New(problem.Unauthenticated, "Send a bearer credential in the Authorization header."))
		return
	}
	q, err := caseQuery(c, cred)
	if err != nil {
		_ = c.Error(err)
		return
	}
	refs, next, err := h.cases.Cases(c.Request.Context(), q)
	if errors.Is(err, store.ErrBadCursor) {
		_ = c.Error(problem.New(InvalidQuery, "cursor must be the nextCursor of a previous page of the same query."))
		return
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := caseListView{Cases: []caseSummaryView{}}
	if next != "" {
		v.NextCursor = &next
	}
	for _, ref := range refs {
		l, err := h.cases.Load(c.Request.Context(), ref.CaseID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			_ = c.Error(err)
			return
		}
		visible, err := h.visible(c.Request.Context(), cred, l.Case, "")
		if err != nil {
			_ = c.Error(err)
			return
		}
		if visible {
			v.Cases = append(v.Cases, caseSummary(l, cred))
		}
	}
	private(c, v)
}

// caseQuery reads the list's query, refusing what it cannot mean.
func caseQuery(c *gin.Context, cred auth.Credential) (store.CaseQuery, error) {
	holder := cred.PartnerID
	if cred.ForAccount() {
		// An account's token or session lists the cases the account
		// takes part in; visible then keeps those it may see (a token
		// bound to one case, that case alone).
		holder = store.AccountHolder(cred.AccountID)
	}
	q := store.CaseQuery{
		Partner: procedure.Partner{Tenant: cred.Tenant, Environment: string(cred.Environment), PartnerID: holder},
		Limit:   defaultCaseListLimit,
		Cursor:  c.Query("cursor"),
	}
	if s, ok := c.GetQuery("limit"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxCaseListLimit {
			return q, problem.Newf(InvalidQuery, "limit must be a whole number from 1 to %d.", maxCaseListLimit)
		}
		q.Limit = n
	}
	if s, ok := c.GetQuery("status"); ok {
		if !slices.Contains(procedure.Statuses, procedure.Status(s)) {
			return q, problem.Newf(InvalidQuery, "status must be one of the case statuses (%s).", statusList())
		}
		q.Status = procedure.Status(s)
	}
	for name, dst := range map[string]*time.Time{"openedAfter": &q.OpenedAfter, "openedBefore": &q.OpenedBefore} {
		if s, ok := c.GetQuery(name); ok {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return q, problem.Newf(InvalidQuery, "%s must be an RFC 3339 date-time, such as 2026-11-27T00:00:00Z.", name)
			}
			*dst = t
		}
	}
	if !q.OpenedAfter.IsZero() && !q.OpenedBefore.IsZero() && !q.OpenedAfter.Before(q.OpenedBefore) {
		return q, problem.New(InvalidQuery, "openedAfter must be before openedBefore.")
	}
	return q, nil
}

func statusList() string {
	s := ""
	for i, st := range procedure.Statuses {
		if i > 0 {
			s += ", "
		}
		s += string(st)
	}
	return s
}

func caseSummary(l store.Loaded, cred auth.Credential) caseSummaryView {
	cs := l.Case
	v := caseSummaryView{
		CaseID: cs.ID, ExternalCaseID: cs.ExternalID, Status: string(cs.Status()), CaseMode: string(cs.Mode),
		OpenedAt: ts(cs.OpenedAt), YourSides: []string{}, LastSequence: l.Sequence,
	}
	if v.CaseMode == "" {
		v.CaseMode = string(procedure.ModeProceeding)
	}
	if !cs.ClosedAt.IsZero() {
		v.ClosedAt = ts(cs.ClosedAt)
	}
	for _, side := range []procedure.Side{procedure.Claimant, procedure.Respondent} {
		if slices.ContainsFunc(cs.Participants, func(p procedure.Participant) bool { return p.Side == side && p.PartnerID == cred.PartnerID }) {
			v.YourSides = append(v.YourSides, string(side))
		}
	}
	return v
}
