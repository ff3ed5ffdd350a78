package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// recorded is one request the fake admin API received.
type recorded struct {
	method, path, query, auth, actor string
	body                             map[string]string
}

// fakeEdge answers like the edge's admin API: canned data per path, and a
// 409 problem for an extension to 2026-01-01.
func fakeEdge(t *testing.T) (*httptest.Server, *[]recorded) {
	t.Helper()
	var got []recorded
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := recorded{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, auth: r.Header.Get("Authorization"), actor: r.Header.Get("X-PC-Actor")}
		if b, _ := io.ReadAll(r.Body); len(b) > 0 {
			require.NoError(t, json.Unmarshal(b, &rec.body))
		}
		got = append(got, rec)
		if rec.body["sunset"] == "2026-01-01" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"code":"extension_shortened","status":409,"detail":"The extension of cred_a in v2-cases is 2026-10-31; 2026-01-01 would shorten it."}`)
			return
		}
		data := `{}`
		switch r.URL.Path {
		case "/admin/compatibility/policy":
			data = `{"enabled":true,"families":[{"family":"v2-cases","generalAvailabilityDate":"2026-01-15","source":"store","stage":"brownout",
				"windowEnd":"2026-07-14","integrationWindowEnd":"2026-10-31","nextMilestone":{"name":"90-days-left","at":"2026-08-02T00:00:00Z"},
				"brownouts":[{"start":"2026-07-20T14:00:00Z","end":"2026-07-20T14:30:00Z"}],"extensions":[{"integration":"cred_a","sunset":"2026-10-31"}]}]}`
		case "/admin/compatibility/audit":
			data = `[{"id":"1-0","actor":"ana","at":"2026-06-01T12:00:00Z","action":"extension.approve","target":"v2-cases/cred_a","change":{"sunset":"2026-10-31"}}]`
		case "/admin/compatibility/notices":
			data = `[{"family":"v2-cases","credential":"cred_c","milestone":"30-days-left","state":"undeliverable","detail":"no contact for partner partner-c","attempts":1,"at":"2026-06-14T00:00:00Z"},
				{"family":"v2-cases","since":"2026-03-01","credential":"cred_c","milestone":"window-start","state":"sent","to":"c@c.example","attempts":1,"at":"2026-03-01T00:00:00Z"}]`
		case "/admin/compatibility/contacts":
			data = `{"partner-b":"api@b.example","partner-a":"ops@a.example"}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":`+data+`,"requestId":"req_1"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func TestCompatCommands(t *testing.T) {
	srv, got := fakeEdge(t)
	env := map[string]string{"EDGE_ADMIN_URL": srv.URL, "EDGE_ADMIN_TOKEN": "adm_0123456789abcdef", "USER": "ana"}
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"compat"}, args...), func(k string) string { return env[k] }, &out)
		return out.String(), err
	}
	tests := []struct {
		name    string
		args    []string
		want    recorded
		output  []string
		wantErr string
	}{
		{"policy", []string{"policy", "--family", "v2-cases", "--integration", "cred_a"},
			recorded{method: "GET", path: "/admin/compatibility/policy", query: "family=v2-cases&integration=cred_a"},
			[]string{"announcements: on", "v2-cases", "2026-07-14", "2026-10-31", "90-days-left 2026-08-02", "cred_a=2026-10-31", "2026-07-20T14:00:00Z/2026-07-20T14:30:00Z"}, ""},
		{"extend", []string{"extend", "--family", "v2-cases", "--integration", "cred_a", "--sunset", "2026-10-31"},
			recorded{method: "PUT", path: "/admin/compatibility/families/v2-cases/extensions/cred_a", actor: "ana", body: map[string]string{"sunset": "2026-10-31"}},
			[]string{"extension approved: v2-cases cred_a until 2026-10-31 (audited as ana)"}, ""},
		{"extend refused", []string{"extend", "--family", "v2-cases", "--integration", "cred_a", "--sunset", "2026-01-01", "--actor", "bob"},
			recorded{method: "PUT", path: "/admin/compatibility/families/v2-cases/extensions/cred_a", actor: "bob", body: map[string]string{"sunset": "2026-01-01"}},
			nil, "409 extension_shortened: The extension of cred_a in v2-cases is 2026-10-31"},
		{"brownout", []string{"brownout", "--family", "v2-cases", "--start", "2026-07-20T14:00:00Z", "--end", "2026-07-20T14:30:00Z"},
			recorded{method: "POST", path: "/admin/compatibility/families/v2-cases/brownouts", actor: "ana",
				body: map[string]string{"start": "2026-07-20T14:00:00Z", "end": "2026-07-20T14:30:00Z"}},
			[]string{"brownout scheduled"}, ""},
		{"contact", []string{"contact", "--partner", "partner-a", "--email", "ops@a.example"},
			recorded{method: "PUT", path: "/admin/compatibility/contacts/partner-a", actor: "ana", body: map[string]string{"email": "ops@a.example"}},
			[]string{"contact of partner-a: ops@a.example"}, ""},
		{"contacts", []string{"contact"}, recorded{method: "GET", path: "/admin/compatibility/contacts"},
			[]string{"partner-a  ops@a.example", "partner-b  api@b.example"}, ""},
		{"notices", []string{"notices", "--state", "undeliverable"}, recorded{method: "GET", path: "/admin/compatibility/notices", query: "state=undeliverable"},
			[]string{"cred_c", "undeliverable", "no contact for partner partner-c", "v2-cases@2026-03-01"}, ""},
		{"audit", []string{"audit", "--count", "5"}, recorded{method: "GET", path: "/admin/compatibility/audit", query: "count=5"},
			[]string{"ana", "extension.approve", "v2-cases/cred_a", `{"sunset":"2026-10-31"}`}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			*got = nil
			out, err := run(tc.args...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			require.Len(t, *got, 1)
			r := (*got)[0]
			require.Equal(t, "Bearer adm_0123456789abcdef", r.auth)
			r.auth = ""
			require.Equal(t, tc.want, r)
			for _, s := range tc.output {
				require.Contains(t, out, s)
			}
		})
	}

	*got = nil
	_, err := run("extend", "--family", "v2-cases")
	require.ErrorContains(t, err, "required")
	delete(env, "EDGE_ADMIN_TOKEN")
	_, err = run("policy")
	require.ErrorContains(t, err, "EDGE_ADMIN_TOKEN")
	_, err = run("nonsense")
	require.Error(t, err)
	require.Empty(t, *got, "nothing is called without what it needs")
}
