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
	strict := endpoints.URLRules{CheckAddr: egress.Policy{}.CheckFor}
	sandboxHTTP := endpoints.URLRules{AllowHTTP: true, CheckAddr: egress.Policy{}.CheckFor}
	dev := endpoints.URLRules{AllowHTTP: true, CheckAddr: egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}.CheckFor}
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

		// Item 5: every spelling of an internal address, read as the
		// dialer (the system resolver's inet_aton) reads it, is refused
		// for live, whatever the deployment's allowlist says.
		{"short form 127.1", dev, "live", "https://127.1/", "", "forbidden"},
		{"decimal integer", dev, "live", "https://2130706433/", "", "forbidden"},
		{"hex integer", dev, "live", "https://0x7f000001/", "", "forbidden"},
		{"hex integer, upper case", dev, "live", "https://0X7F000001/", "", "forbidden"},
		{"octal dotted", dev, "live", "https://0177.0.0.1/", "", "forbidden"},
		{"hex dotted", dev, "live", "https://0x7f.0.0.1/", "", "forbidden"},
		{"trailing dot", dev, "live", "https://127.0.0.1./", "", "forbidden"},
		{"localhost with trailing dot", dev, "live", "https://localhost./", "", "forbidden"},
		{"subdomain of localhost", dev, "live", "https://a.b.localhost/", "", "forbidden"},
		{"upper-case localhost", dev, "live", "https://LOCALHOST:8443/", "", "forbidden"},
		{"loopback in dev, live", dev, "live", "https://127.0.0.1:9000/", "", "forbidden"},
		{"v6 loopback long form", dev, "live", "https://[0:0:0:0:0:0:0:1]/", "", "forbidden"},
		{"v4-mapped loopback", dev, "live", "https://[::ffff:127.0.0.1]/", "", "forbidden"},
		{"v4-mapped loopback in hex", dev, "live", "https://[::ffff:7f00:1]/", "", "forbidden"},
		{"v4-compatible loopback", dev, "live", "https://[::127.0.0.1]/", "", "forbidden"},
		{"nat64 loopback", dev, "live", "https://[64:ff9b::7f00:1]/", "", "forbidden"},
		{"6to4 loopback", dev, "live", "https://[2002:7f00:1::1]/", "", "forbidden"},
		{"v6 unspecified", dev, "live", "https://[::]/", "", "forbidden"},
		{"v4 unspecified", dev, "live", "https://0.0.0.0/", "", "forbidden"},
		{"v4 unspecified as 0", dev, "live", "https://0/", "", "forbidden"},
		{"metadata as decimal", dev, "live", "https://2852039166/", "", "forbidden"},
		{"link-local v6 with zone", dev, "live", "https://[fe80::1%25eth0]/", "", "forbidden"},
		{"private", dev, "live", "https://10.0.0.8/", "", "forbidden"},
		{"private short form", dev, "live", "https://10.8/", "", "forbidden"},
		{"sandbox outside the allowlist", dev, "sandbox", "http://169.254.169.254/latest/meta-data/", "", "forbidden"},
		{"sandbox short form outside the allowlist", dev, "sandbox", "http://0xa9fea9fe/", "", "forbidden"},
		{"allowlisted, but spelled unusually", dev, "sandbox", "http://127.1:9000/", "", "dotted decimal"},
		{"public, but spelled unusually", strict, "live", "https://134744072/", "", "dotted decimal"},
		{"a number that is no address", strict, "live", "https://1.2.3.4.5/", "", "not an IPv4 address"},
		{"a last label out of range", strict, "live", "https://1.2.3.256/", "", "not an IPv4 address"},
		{"a name ending in a number", strict, "live", "https://hooks.example.123/", "", "not an IPv4 address"},
		{"a name with digits is a name", strict, "live", "https://123.hooks.example/", "https://123.hooks.example/", ""},
		{"a public address", strict, "live", "https://8.8.8.8/hook", "https://8.8.8.8/hook", ""},
		{"a public v6 address", strict, "live", "https://[2606:4700::1111]/hook", "https://[2606:4700::1111]/hook", ""},

		// Item 9: characters RFC 3986 does not allow are refused, not
		// written raw into the request line.
		{"raw space in the query", strict, "live", "https://hooks.example/pc?a=b c", "", "percent-encode"},
		{"raw < in the query", strict, "live", "https://hooks.example/pc?a=<x>", "", "percent-encode"},
		{"raw > in the path", strict, "live", "https://hooks.example/a>b", "", "percent-encode"},
		{"raw quote", strict, "live", `https://hooks.example/pc?a="b"`, "", "percent-encode"},
		{"raw braces", strict, "live", "https://hooks.example/pc?a={b}", "", "percent-encode"},
		{"raw pipe", strict, "live", "https://hooks.example/pc?a=b|c", "", "percent-encode"},
		{"raw backslash", strict, "live", `https://hooks.example\pc`, "", "percent-encode"},
		{"raw caret and backtick", strict, "live", "https://hooks.example/pc?a=^`", "", "percent-encode"},
		{"tab", strict, "live", "https://hooks.example/pc?a=\tb", "", "percent-encode"},
		{"CR LF", strict, "live", "https://hooks.example/pc?a=b\r\nX-Injected: 1", "", "percent-encode"},
		{"non-ASCII", strict, "live", "https://hooks.example/pc?name=é", "", "percent-encode"},
		{"a bare %", strict, "live", "https://hooks.example/pc?a=100%", "", "two hex digits"},
		{"a % with one hex digit", strict, "live", "https://hooks.example/pc?a=%2", "", "two hex digits"},
		{"percent-encoded is fine", strict, "live", "https://hooks.example/pc?a=b%20c&d=%3Cx%3E", "https://hooks.example/pc?a=b%20c&d=%3Cx%3E", ""},
		{"every other RFC 3986 character is fine", strict, "live", "https://hooks.example/a-b._~!$&'()*+,;=:@/?q=[1]", "https://hooks.example/a-b._~!$&'()*+,;=:@/?q=[1]", ""},
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
