// The compatibility page: the partner's deprecated calls and the deadlines
// that apply to it, from the edge's public usage read.

package console

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

type compatRow struct {
	Route            string
	Family           string
	Successor        string
	First, Last      time.Time
	Count            int64
	Last24h, Last30d int64
	Sample           string // the request id of the latest call
	Credentials      []string
	Sunset           time.Time
	Extension        time.Time // an approved later deadline for this partner; zero: none
	Brownouts        []span
	Stage            string // warn, brownout or retired
	Status           string
	// Chart draws the calls of the last 30 days, the Sunset marked.
	Chart *dayChart
}

type span struct{ Start, End time.Time }

type compatView struct {
	Rows      []compatRow
	Enabled   bool
	Missing   string
	Announced bool
}

// compatibilityUsage is the answer of GET /api/compatibility/usage, the
// edge's partner-scoped read of its legacy-use ledger (api/openapi.yaml).
type compatibilityUsage struct {
	Data struct {
		AnnouncementsEnabled bool `json:"announcementsEnabled"`
		Routes               []struct {
			Route           string     `json:"route"`
			Family          string     `json:"family"`
			Successor       string     `json:"successor"`
			FirstCallAt     time.Time  `json:"firstCallAt"`
			LastCallAt      time.Time  `json:"lastCallAt"`
			Calls           int64      `json:"calls"`
			CallsLast24h    int64      `json:"callsLast24h"`
			CallsLast30d    int64      `json:"callsLast30d"`
			CallsByDay      []dayCalls `json:"callsByDay"`
			SampleRequestID string     `json:"sampleRequestId"`
			Sunset          *time.Time `json:"sunset"`
			Extension       *time.Time `json:"extension"`
			Stage           string     `json:"stage"`
			Brownouts       []span     `json:"brownouts"`
			Credentials     []struct {
				ID    string `json:"id"`
				Label string `json:"label"`
			} `json:"credentials"`
		} `json:"routes"`
	} `json:"data"`
}

// compatibility lists the deprecated routes this partner's credentials
// called, with the successor and the Sunset that applies to this partner,
// as the edge's public GET /api/compatibility/usage answers the session's
// credential: the partner's own use, and nothing of another's.
func (cs *Console) compatibility(c *gin.Context, s *session) {
	var u compatibilityUsage
	if err := cs.client.call(c.Request.Context(), s.bearer, http.MethodGet, "/api/compatibility/usage", nil, nil, "", &u); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/deliveries"))
		return
	}
	v := compatView{Enabled: u.Data.AnnouncementsEnabled}
	for _, r := range u.Data.Routes {
		row := compatRow{Route: r.Route, Family: r.Family, Successor: r.Successor, First: r.FirstCallAt, Last: r.LastCallAt,
			Count: r.Calls, Last24h: r.CallsLast24h, Last30d: r.CallsLast30d, Sample: r.SampleRequestID,
			Brownouts: r.Brownouts, Stage: r.Stage, Status: "fine: no retirement date is announced for this route"}
		for _, cr := range r.Credentials {
			label := cr.ID
			if cr.Label != "" {
				label += " (" + cr.Label + ")"
			}
			row.Credentials = append(row.Credentials, label)
		}
		if r.Extension != nil {
			row.Extension = *r.Extension
		}
		if r.Sunset != nil {
			row.Sunset = *r.Sunset
			row.Status = "fix by " + row.Sunset.UTC().Format(time.DateOnly)
			if !cs.now().Before(row.Sunset) {
				row.Status = "past its Sunset of " + row.Sunset.UTC().Format(time.DateOnly) + ": calls may be refused with 410; fix now"
			}
			v.Announced = true
		}
		row.Chart = newDayChart(r.Route, r.CallsByDay, row.Sunset)
		v.Rows = append(v.Rows, row)
	}
	cs.render(c, http.StatusOK, "compatibility", cs.frame(c, s, "compatibility", v))
}
