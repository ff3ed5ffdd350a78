// The administrators' reads: notice contacts, the notices sent, the audit
// trail.

package admin

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

func (a *API) listContacts(c *gin.Context) {
	m, err := a.Store.Contacts(c)
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"data": m, "requestId": requestid.Get(c)})
}

// listNotices lists every notice recorded (sent, failed, undeliverable,
// possibly sent), optionally of one family and in one state.
func (a *API) listNotices(c *gin.Context) {
	families := inventory.Families
	if f := inventory.Family(c.Query("family")); f != "" {
		if !f.Valid() {
			_ = c.Error(invalid("Family %q is not v2-filings, v2-cases or website-cases.", problem.Clip(string(f))))
			return
		}
		families = []inventory.Family{f}
	}
	state := store.NoticeState(c.Query("state"))
	out := []store.Notice{}
	for _, f := range families {
		ns, err := a.Store.Notices(c, f)
		if err != nil {
			_ = c.Error(err)
			return
		}
		for _, n := range ns {
			if state == "" || n.State == state {
				out = append(out, n)
			}
		}
	}
	c.JSON(http.StatusOK, gin.H{"data": out, "requestId": requestid.Get(c)})
}

// listAudit answers the newest changes first (?count=, 1 to 1000, 100).
func (a *API) listAudit(c *gin.Context) {
	count := int64(100)
	if v := c.Query("count"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 1000 {
			_ = c.Error(problem.New(problem.InvalidRequest, "count is 1 to 1000."))
			return
		}
		count = n
	}
	entries, err := a.Store.Audit(c, count)
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"data": entries, "requestId": requestid.Get(c)})
}
