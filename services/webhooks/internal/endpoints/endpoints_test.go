package endpoints_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/egress"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func TestValidateURL(t *testing.T) {
	strict := endpoints.URLRules{CheckAddr: egress.Policy{}.Check}
	sandboxHTTP := endpoints.URLRules{AllowHTTP: true, CheckAddr: egress.Policy{}.Check}
	dev := endpoints.URLRules{AllowHTTP: true, CheckAddr: egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}.Check}
	tests := []struct {
		name    string
		rules   endpoints.URLRules
		env     string
		in      string
		want    string
		wantErr string
	}{
		{"https", strict, "live", "https://Hooks.Partner.example/pc?x=1", "https://hooks.partner.example/pc?x=1", ""},
		{"https with port", strict, "live", "https://hooks.partner.example:8443/pc", "https://hooks.partner.example:8443/pc", ""},
		{"http refused in live even if allowed", sandboxHTTP, "live", "http://hooks.partner.example/", "", "live endpoints must use https"},
		{"http refused by default", strict, "sandbox", "http://hooks.partner.example/", "", "must use https"},
		{"http allowed in sandbox by config", sandboxHTTP, "sandbox", "http://hooks.partner.example/", "http://hooks.partner.example/", ""},
		{"empty", strict, "live", "", "", "required"},
		{"relative", strict, "live", "/hook", "", "absolute"},
		{"ftp", strict, "live", "ftp://x.example/", "", "scheme"},
		{"credentials", strict, "live", "https://user:pw@hooks.partner.example/", "", "credentials"},
		{"user only", strict, "live", "https://user@hooks.partner.example/", "", "credentials"},
		{"fragment", strict, "live", "https://hooks.partner.example/#x", "", "fragment"},
		{"no host", strict, "live", "https:///path", "", "no host"},
		{"bad port", strict, "live", "https://hooks.partner.example:0/", "", "port"},
		{"loopback literal", strict, "live", "https://127.0.0.1/", "", "forbidden"},
		{"metadata literal", strict, "live", "https://169.254.169.254/latest", "", "forbidden"},
		{"v6 loopback", strict, "live", "https://[::1]/", "", "forbidden"},
		{"localhost", strict, "live", "https://localhost/", "", "forbidden"},
		{"localhost allowed in dev", dev, "sandbox", "http://localhost:9000/hook", "http://localhost:9000/hook", ""},
		{"too long", strict, "live", "https://x.example/" + strings.Repeat("a", 2048), "", "longer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.rules.ValidateURL(tc.in, tc.env)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRegistrationFilterAndDescription(t *testing.T) {
	r := endpoints.URLRules{}
	reg, err := r.NewRegistration("live", "https://h.example/", []string{"case.opened", "case.opened", "award.issued"}, "ops")
	require.NoError(t, err)
	assert.Equal(t, []string{"case.opened", "award.issued"}, reg.EventTypes)

	_, err = r.NewRegistration("live", "https://h.example/", []string{"Case Opened"}, "")
	var ve *endpoints.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "eventTypes", ve.Field)
	_, err = r.NewRegistration("live", "https://h.example/", nil, strings.Repeat("é", 501))
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "description", ve.Field)
	_, err = r.NewRegistration("live", "https://h.example/", nil, "a\nb")
	require.ErrorAs(t, err, &ve)

	all := endpoints.New("we_1", endpoints.Scope{}, endpoints.Registration{URL: "https://h.example/"}, t0)
	assert.True(t, all.Wants("anything"), "no filter: every type")
	some := endpoints.New("we_2", endpoints.Scope{}, reg, t0)
	assert.True(t, some.Wants("award.issued"))
	assert.False(t, some.Wants("case.closed"))
	assert.False(t, endpoints.Disable(some, t0).Wants("award.issued"), "disabled endpoints want nothing")
}

func TestStatusMoves(t *testing.T) {
	e := endpoints.New("we_1", endpoints.Scope{Environment: "live"}, endpoints.Registration{URL: "https://h.example/"}, t0)
	p := delivery.DefaultHealthPolicy()

	gone, changed := endpoints.RecordAttempt(e, p, delivery.Gone, t0)
	require.True(t, changed)
	assert.Equal(t, endpoints.DisabledAfterFailures, gone.Status)
	assert.Equal(t, "gone", gone.DisabledReason)
	require.Len(t, gone.Events, 1, "an operational event records the disable")
	assert.Equal(t, endpoints.Event{Type: endpoints.EventDisabled, At: t0, Reason: "gone"}, gone.Events[0])

	failing := e
	for i := range 12 {
		failing, changed = endpoints.RecordAttempt(failing, p, delivery.Failure, t0.Add(time.Duration(i)*11*time.Hour))
	}
	require.True(t, changed)
	assert.Equal(t, endpoints.DisabledAfterFailures, failing.Status)
	assert.Equal(t, "failures", failing.DisabledReason)
	assert.Equal(t, []endpoints.Event{{Type: endpoints.EventDisabled, At: t0.Add(11 * 11 * time.Hour), Reason: "failures", FailingSince: t0, Failures: 12}}, failing.Events)

	again := endpoints.Enable(failing, t0.Add(200*time.Hour))
	assert.Equal(t, endpoints.Enabled, again.Status)
	assert.False(t, again.Health.Failing(), "enabling starts a fresh streak")

	off := endpoints.Disable(again, t0)
	assert.Equal(t, endpoints.DisabledByPartner, off.Status)
	_, changed = endpoints.RecordAttempt(off, p, delivery.Gone, t0)
	assert.False(t, changed, "a partner-disabled endpoint stays as the partner left it")
	assert.Len(t, again.Events, 1, "enabling keeps the history")

	// The history is bounded: the oldest events go first.
	churn := e
	for i := range endpoints.MaxEvents + 5 {
		churn, _ = endpoints.RecordAttempt(churn, p, delivery.Gone, t0.Add(time.Duration(i)*time.Hour))
		churn = endpoints.Enable(churn, t0.Add(time.Duration(i)*time.Hour))
	}
	require.Len(t, churn.Events, endpoints.MaxEvents)
	assert.Equal(t, t0.Add(5*time.Hour), churn.Events[0].At)
	assert.Equal(t, t0.Add(time.Duration(endpoints.MaxEvents+4)*time.Hour), churn.Events[endpoints.MaxEvents-1].At)

	patched, err := endpoints.URLRules{}.Apply(e, endpoints.Patch{URL: ptr("http://h.example/")}, t0)
	require.Error(t, err)
	assert.Equal(t, e.URL, patched.URL)
	empty := []string{}
	patched, err = endpoints.URLRules{}.Apply(endpoints.New("x", e.Scope, endpoints.Registration{URL: "https://h.example/", EventTypes: []string{"a"}}, t0), endpoints.Patch{EventTypes: &empty}, t0)
	require.NoError(t, err)
	assert.Empty(t, patched.EventTypes)
}

func ptr[T any](v T) *T { return &v }
