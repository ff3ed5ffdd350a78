package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// Evidence exports (docs/evidence.md#evidence-exports): when a record
// closes, each side's evidence export is ready and that side's partners
// get an evidence_export_ready case event, signed and delivered by the
// webhooks service. Its eventId is the notification's identity (spec,
// Events rule 5): the partner lists its notifications here and records
// its receipt of each by that id, never by an Idempotency-Key, so a
// retried receipt of a redelivered event is the same receipt.

// Problem codes of the evidence exports.
var (
	// ExportNotificationNotFound: the event id is not an evidence-export
	// notification sent to the calling partner. Another partner's or
	// another tenant's notification answers the same, disclosing nothing.
	ExportNotificationNotFound = problem.Code{Name: "export_notification_not_found", Status: http.StatusNotFound, Title: "Export notification not found"}
	// ExportReceiptNotFound: the notification is the partner's, but it has
	// not recorded its receipt yet.
	ExportReceiptNotFound = problem.Code{Name: "export_receipt_not_found", Status: http.StatusNotFound, Title: "Export receipt not recorded"}
)

const (
	defaultExportLimit = 50
	maxExportLimit     = 200
)

// exportNotificationView is one notification as its partner reads it: the
// exported side's disclosed exhibits and the record's digest, read from
// the case (the record is closed, so they are what was exported), and the
// partner's receipt, null until recorded.
type exportNotificationView struct {
	EventID      string         `json:"eventId"`
	CaseID       string         `json:"caseId"`
	Side         string         `json:"side"`
	Exhibits     []exportedFile `json:"exhibits"`
	RecordDigest string         `json:"recordDigest"`
	ReadyAt      string         `json:"readyAt"`
	Receipt      *receiptView   `json:"receipt"`
}

type exportedFile struct {
	ID     string `json:"id"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

type receiptView struct {
	ReceivedAt string `json:"receivedAt"`
}

type exportNotificationsView struct {
	Notifications []exportNotificationView `json:"notifications"`
	NextCursor    *string                  `json:"nextCursor"`
}

type exportReceiptView struct {
	EventID    string `json:"eventId"`
	ReceivedAt string `json:"receivedAt"`
	Duplicate  bool   `json:"duplicate"`
}

// registerExports adds the evidence-export routes. Any credential of the
// partner reads and records the partner's own notifications: they are
// addressed to the partner, not to a case participant.
func (h *handlers) registerExports(r gin.IRouter, k routeKit) {
	r.GET("/api/v2/evidence-exports/notifications", k.authenticated, h.listExportNotifications)
	r.GET("/api/v2/evidence-exports/receipts/:eventId", k.authenticated, h.getExportReceipt)
	r.POST("/api/v2/evidence-exports/receipts/:eventId", k.authenticated, h.recordExportReceipt)
}

func callerPartner(c *gin.Context) (procedure.Partner, error) {
	cred, ok := auth.CredentialFrom(c.Request.Context())
	if !ok {
		return procedure.Partner{}, problem.New(problem.Unauthenticated, "Send a bearer credential in the Authorization header.")
	}
	return procedure.Partner{Tenant: cred.Tenant, Environment: string(cred.Environment), PartnerID: cred.PartnerID}, nil
}

// listExportNotifications pages through the partner's notifications,
// newest first: ?cursor=<nextCursor of the previous page>, ?limit=1..200.
func (h *handlers) listExportNotifications(c *gin.Context) {
	limit := defaultExportLimit
	if s, ok := c.GetQuery("limit"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxExportLimit {
			_ = c.Error(problem.Newf(InvalidQuery, "limit must be a whole number from 1 to %d.", maxExportLimit))
			return
		}
		limit = n
	}
	p, err := callerPartner(c)
	if err != nil {
		_ = c.Error(err)
		return
	}
	ns, next, err := h.cases.ExportNotifications(c.Request.Context(), p, c.Query("cursor"), limit)
	if errors.Is(err, store.ErrBadCursor) {
		_ = c.Error(problem.New(InvalidQuery, "cursor must be the nextCursor of a previous page."))
		return
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := exportNotificationsView{Notifications: []exportNotificationView{}}
	if next != "" {
		v.NextCursor = &next
	}
	for _, n := range ns {
		nv, err := h.exportView(c, n)
		if err != nil {
			_ = c.Error(err)
			return
		}
		v.Notifications = append(v.Notifications, nv)
	}
	private(c, v)
}

func (h *handlers) exportView(c *gin.Context, n store.ExportNotification) (exportNotificationView, error) {
	l, err := h.cases.Load(c.Request.Context(), n.CaseID)
	if err != nil {
		return exportNotificationView{}, err
	}
	v := exportNotificationView{EventID: n.EventID, CaseID: n.CaseID, Side: string(n.Side), Exhibits: []exportedFile{},
		RecordDigest: l.Case.RecordDigest(), ReadyAt: ts(n.ReadyAt)}
	for _, e := range l.Case.Evidence.Record() {
		if e.Side == string(n.Side) {
			v.Exhibits = append(v.Exhibits, exportedFile{ID: e.ID, SHA256: e.SHA256, Size: e.Size})
		}
	}
	if n.Receipt != nil {
		v.Receipt = &receiptView{ReceivedAt: ts(n.Receipt.ReceivedAt)}
	}
	return v, nil
}

func (h *handlers) getExportReceipt(c *gin.Context) {
	p, err := callerPartner(c)
	if err != nil {
		_ = c.Error(err)
		return
	}
	id := c.Param("eventId")
	n, err := h.cases.ExportNotification(c.Request.Context(), p, id)
	if errors.Is(err, store.ErrExportNotFound) {
		_ = c.Error(exportNotFound(id))
		return
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	if n.Receipt == nil {
		_ = c.Error(problem.Newf(ExportReceiptNotFound, "No receipt of %s is recorded yet; POST it to record one.", id))
		return
	}
	private(c, exportReceiptView{EventID: id, ReceivedAt: ts(n.Receipt.ReceivedAt)})
}

// recordExportReceipt records the receipt once per event id: the first
// POST answers 201, every later one 200 with the first receipt unchanged
// and duplicate true.
func (h *handlers) recordExportReceipt(c *gin.Context) {
	p, err := callerPartner(c)
	if err != nil {
		_ = c.Error(err)
		return
	}
	id := c.Param("eventId")
	r, first, err := h.cases.RecordExportReceipt(c.Request.Context(), p, id, h.flow.Now())
	if errors.Is(err, store.ErrExportNotFound) {
		_ = c.Error(exportNotFound(id))
		return
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	status := http.StatusOK
	if first {
		status = http.StatusCreated
	}
	c.Header("Cache-Control", "private, no-store")
	c.JSON(status, gin.H{"data": exportReceiptView{EventID: id, ReceivedAt: ts(r.ReceivedAt), Duplicate: !first}, "requestId": requestid.Get(c)})
}

func exportNotFound(id string) *problem.Error {
	return problem.Newf(ExportNotificationNotFound, "No evidence-export notification %s was sent to this partner.", id)
}
