package main

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
)

// TestMakeRunStartsEveryTimeOnItsOwnState starts the stack 25 times on one
// state directory, as a developer runs make run day after day. The
// development receiver takes a new port at every start; the stack moves
// its one endpoint there instead of registering another, so the partner
// never reaches its limit of 20 endpoints. After the first start the test
// leaves what starts before this rule left (19 more endpoints with the
// receiver's description, the partner at its limit): the next start must
// come up and clean them away. The last start's receiver verifies a test
// event sent to that reused endpoint, signed for its id. The reference
// adjudicator's endpoint is reused the same way, and the tribunal pool
// holds one adjudicator and one reviewer at every start: this start's.
func TestMakeRunStartsEveryTimeOnItsOwnState(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole stack 25 times; skipped with -short")
	}
	base := stackPorts(t)
	extra := freeBlock(t, 6, 10000)
	dir := t.TempDir()
	edge := "http://127.0.0.1:" + strconv.Itoa(base)

	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(extra+3)})
	t.Cleanup(func() { rdb.Close() })
	pool := auth.NewStore(rdb, auth.DefaultStoreConfig())

	var endpointID, adjudicatorEndpointID string
	for start := 1; start <= 25; start++ {
		up := runStack(t, dir, base, extra)
		token := orchestratorToken(t, dir)

		adjudicators := devEndpoints(t, edge, credentialsEnv(t, dir, "PCOURT_ADJUDICATOR_TOKEN"), adjudicatorDescription)
		require.Len(t, adjudicators, 1, "start %d: one endpoint of the reference adjudicator", start)
		require.Equal(t, "enabled", adjudicators[0].Status, "start %d", start)
		if adjudicatorEndpointID == "" {
			adjudicatorEndpointID = adjudicators[0].ID
		}
		require.Equal(t, adjudicatorEndpointID, adjudicators[0].ID, "start %d: the adjudicator's endpoint of the first start is reused", start)
		listening(t, adjudicators[0].URL)
		members, err := pool.TribunalPool(context.Background(), devTenant, auth.Sandbox)
		require.NoError(t, err)
		var roles []auth.Role
		for _, m := range members {
			roles = append(roles, m.Credential.Role)
		}
		require.ElementsMatch(t, []auth.Role{auth.RoleAdjudicator, auth.RoleReviewer}, roles, "start %d: the earlier starts' members are retired", start)

		receivers := devEndpoints(t, edge, token, receiverDescription)
		require.Len(t, receivers, 1, "start %d: one development receiver", start)
		got := receivers[0]
		require.Equal(t, "enabled", got.Status, "start %d", start)
		if endpointID == "" {
			endpointID = got.ID
		}
		require.Equal(t, endpointID, got.ID, "start %d: the endpoint of the first start is reused", start)
		listening(t, got.URL)

		switch start {
		case 1:
			// What every start before this rule did: one more endpoint each.
			for i := 0; i < 19; i++ {
				api := devAPI{base: edge + "/api/v2/webhooks", token: token}
				require.NoError(t, api.call(context.Background(), http.MethodPost, "/endpoints",
					map[string]any{"url": "http://127.0.0.1:9/pcourt-events", "description": receiverDescription},
					http.StatusCreated, nil))
			}
		case 25:
			api := devAPI{base: edge + "/api/v2/webhooks", token: token}
			var sent struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			require.NoError(t, api.call(context.Background(), http.MethodPost, "/endpoints/"+endpointID+"/test",
				map[string]any{}, http.StatusAccepted, &sent))
			require.Eventually(t, func() bool {
				var d struct {
					Data struct {
						Status string `json:"status"`
					} `json:"data"`
				}
				err := api.call(context.Background(), http.MethodGet, "/deliveries/"+sent.Data.ID, nil, http.StatusOK, &d)
				return err == nil && d.Data.Status == "delivered"
			}, 30*time.Second, 100*time.Millisecond, "the test event reaches the receiver of the last start, verified for the reused endpoint")
		}
		require.NoError(t, up.stop(), "start %d", start)
	}
}

type devEndpoint struct {
	ID          string `json:"id"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Status      string `json:"status"`
}

// devEndpoints lists the token's partner's endpoints that make run
// registered under description.
func devEndpoints(t *testing.T, edge, token, description string) []devEndpoint {
	t.Helper()
	var listed struct {
		Data []devEndpoint `json:"data"`
	}
	api := devAPI{base: edge + "/api/v2/webhooks", token: token}
	require.NoError(t, api.call(context.Background(), http.MethodGet, "/endpoints", nil, http.StatusOK, &listed))
	var out []devEndpoint
	for _, e := range listed.Data {
		if e.Description == description {
			out = append(out, e)
		}
	}
	return out
}

// orchestratorToken reads the orchestrator credential this start minted
// from the state directory's credentials.env.
func orchestratorToken(t *testing.T, dir string) string {
	t.Helper()
	return credentialsEnv(t, dir, "PCOURT_ORCHESTRATOR_TOKEN")
}

// listening fails unless something accepts connections at the URL's host.
func listening(t *testing.T, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	require.NoError(t, err, "the endpoint's URL %s has no receiver", raw)
	c.Close()
}
