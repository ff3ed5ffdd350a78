package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMakeRunStartsEveryTimeOnItsOwnState starts the stack 25 times on one
// state directory, as a developer runs make run day after day. The
// development receiver takes a new port at every start; the stack moves
// its one endpoint there instead of registering another, so the partner
// never reaches its limit of 20 endpoints. After the first start the test
// leaves what starts before this rule left (19 more endpoints with the
// receiver's description, the partner at its limit): the next start must
// come up and clean them away. The last start's receiver verifies a test
// event sent to that reused endpoint, signed for its id.
func TestMakeRunStartsEveryTimeOnItsOwnState(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole stack 25 times; skipped with -short")
	}
	base := stackPorts(t)
	extra := freeBlock(t, 4, 10000)
	dir := t.TempDir()
	edge := "http://127.0.0.1:" + strconv.Itoa(base)

	var endpointID string
	for start := 1; start <= 25; start++ {
		up := runStack(t, dir, base, extra)
		token := orchestratorToken(t, dir)

		receivers := devReceivers(t, edge, token)
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

// devReceivers lists partner-dev's endpoints that make run registered.
func devReceivers(t *testing.T, edge, token string) []devEndpoint {
	t.Helper()
	var listed struct {
		Data []devEndpoint `json:"data"`
	}
	api := devAPI{base: edge + "/api/v2/webhooks", token: token}
	require.NoError(t, api.call(context.Background(), http.MethodGet, "/endpoints", nil, http.StatusOK, &listed))
	var out []devEndpoint
	for _, e := range listed.Data {
		if e.Description == receiverDescription {
			out = append(out, e)
		}
	}
	return out
}

// orchestratorToken reads the orchestrator credential this start minted
// from the state directory's credentials.env.
func orchestratorToken(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "credentials.env"))
	require.NoError(t, err)
	lines := bufio.NewScanner(bytes.NewReader(b))
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "export PCOURT_ORCHESTRATOR_TOKEN="); ok {
			return v
		}
	}
	t.Fatalf("no orchestrator token in credentials.env:\n%s", b)
	return ""
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
