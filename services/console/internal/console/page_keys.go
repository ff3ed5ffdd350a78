// The signing keys page (the rotation as the public key set shows it) and
// the in-browser verifier.

package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

type keyRow struct {
	jwk
	Created string
	// The rotation facts of GET /api/webhooks/keys/status.
	State         string
	ActivatesAt   *time.Time
	RetiresAt     *time.Time
	UnpublishedAt *time.Time
	SignsNow      bool
	// SignedNewest: this key signed the newest attempt to this partner.
	SignedNewest bool
}

type keyStatus struct {
	Kid           string     `json:"kid"`
	State         string     `json:"state"`
	ActivatesAt   *time.Time `json:"activatesAt"`
	RetiresAt     *time.Time `json:"retiresAt"`
	UnpublishedAt *time.Time `json:"unpublishedAt"`
	SignsNow      bool       `json:"signsNow"`
}

type keysView struct {
	// Conformance is the key set of the published conformance vectors'
	// key A, which signs the Events page's examples (Verify only).
	Conformance map[string]any
	Keys        []keyRow
	LatestKey   string
	LatestAt    *time.Time
	LatestID    string
	JWKS        map[string]any
	Environment string
}

// keys lists the JWKS of the session's environment by kid with each key's
// rotation state and dates, and which key signs now. Viewing the keys is
// audited.
func (cs *Console) keys(c *gin.Context, s *session) {
	v, err := cs.loadKeys(c, s)
	if err != nil {
		cs.apiRefusal(c, s, err, cs.path("/keys"))
		return
	}
	var status struct {
		Data []keyStatus `json:"data"`
	}
	if err := cs.client.call(c.Request.Context(), "", http.MethodGet, webhooksAPI+"/keys/status", url.Values{"environment": {v.Environment}}, nil, "", &status); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/keys"))
		return
	}
	for i, k := range v.Keys {
		for _, st := range status.Data {
			if st.Kid == k.Kid {
				v.Keys[i].State, v.Keys[i].ActivatesAt, v.Keys[i].RetiresAt, v.Keys[i].UnpublishedAt, v.Keys[i].SignsNow =
					st.State, st.ActivatesAt, st.RetiresAt, st.UnpublishedAt, st.SignsNow
			}
		}
	}
	kids := make([]string, 0, len(v.Keys))
	for _, k := range v.Keys {
		kids = append(kids, k.Kid)
	}
	cs.audit(c, s.Link.Scope, AuditEntry{Action: "keys_viewed", Actor: s.Link.ID, Link: s.Link.ID, Detail: v.Environment + ": " + strings.Join(kids, ", ")})
	cs.render(c, http.StatusOK, "keys", cs.frame(c, s, "keys", v))
}

func (cs *Console) loadKeys(c *gin.Context, s *session) (keysView, error) {
	ctx := c.Request.Context()
	v := keysView{Environment: s.Link.Scope.Environment}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := cs.client.call(ctx, "", http.MethodGet, webhooksAPI+"/keys", url.Values{"environment": {v.Environment}}, nil, "", &set); err != nil {
		return v, err
	}
	var recent struct {
		Data []delivery `json:"data"`
	}
	if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/deliveries", url.Values{"limit": {"10"}}, nil, "", &recent); err != nil {
		return v, err
	}
	for _, d := range recent.Data {
		if d.AttemptCount == 0 {
			continue
		}
		var got struct {
			Data delivery `json:"data"`
		}
		if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/deliveries/"+d.ID, nil, nil, "", &got); err != nil {
			return v, err
		}
		if n := len(got.Data.Attempts); n > 0 {
			last := got.Data.Attempts[n-1]
			v.LatestKey, v.LatestAt, v.LatestID = last.KeyID, &last.StartedAt, d.ID
		}
		break
	}
	for _, k := range set.Keys {
		row := keyRow{jwk: k, SignedNewest: k.Kid != "" && k.Kid == v.LatestKey}
		if parts := strings.Split(k.Kid, "_"); len(parts) == 4 {
			row.Created = parts[2]
		}
		v.Keys = append(v.Keys, row)
	}
	sort.Slice(v.Keys, func(i, j int) bool { return v.Keys[i].Kid > v.Keys[j].Kid })
	if set.Keys == nil {
		set.Keys = []jwk{}
	}
	v.JWKS = map[string]any{"keys": set.Keys}
	return v, nil
}

// verify is the in-browser verification page: its module checks a pasted
// delivery against the published keys, embedded in the page as data.
func (cs *Console) verify(c *gin.Context, s *session) {
	v, err := cs.loadKeys(c, s)
	if err != nil {
		cs.apiRefusal(c, s, err, cs.path("/verify"))
		return
	}
	examples, err := exampleCatalogue()
	if err == nil {
		err = json.Unmarshal([]byte(examples.Published), &v.Conformance)
	}
	if err != nil {
		cs.fail(c, s, err)
		return
	}
	cs.render(c, http.StatusOK, "verify", cs.frame(c, s, "verify", v))
}
