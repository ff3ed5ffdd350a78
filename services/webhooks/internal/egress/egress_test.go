package egress_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/egress"
)

func TestPolicyForbidsEveryInternalClass(t *testing.T) {
	var p egress.Policy
	for _, tc := range []struct{ addr, reason string }{
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"169.254.10.1", "link_local"},
		{"fe80::1", "link_local"},
		{"100.64.0.1", "cgnat"},
		{"100.127.255.254", "cgnat"},
		{"169.254.169.254", "metadata"},
		{"192.0.2.10", "reserved"},
		{"198.18.0.1", "reserved"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "reserved"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"2001:db8::1", "reserved"},
		{"fc00::1", "unique_local"},
		{"fd12:3456::1", "unique_local"},
		{"2002:7f00:0001::1", "6to4_loopback"},
		{"2002:a9fe:a9fe::1", "6to4_metadata"},
		{"2002:0a00:0001::", "6to4_private"},
		{"64:ff9b::7f00:1", "nat64_loopback"},
		{"64:ff9b::a9fe:a9fe", "nat64_metadata"},
		{"64:ff9b::c0a8:0101", "nat64_private"},
		{"::ffff:127.0.0.1", "ipv4_mapped_loopback"},
		{"::ffff:169.254.169.254", "ipv4_mapped_metadata"},
		{"::ffff:10.0.0.1", "ipv4_mapped_private"},
		{"::127.0.0.1", "reserved"},
		{"fe80::1%eth0", "link_local"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			err := p.Check(netip.MustParseAddr(tc.addr))
			var fe *egress.ForbiddenError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.reason, fe.Reason)
			assert.True(t, fe.AddressForbidden())
		})
	}
}

func TestPolicyAllowsPublicAddresses(t *testing.T) {
	var p egress.Policy
	for _, a := range []string{
		"93.184.216.34", "8.8.8.8", "100.63.255.255", "100.128.0.0", "172.32.0.1", "2606:4700::1111",
		"2002:5db8:d822::1", "64:ff9b::808:808", "::ffff:8.8.8.8",
	} {
		assert.NoError(t, p.Check(netip.MustParseAddr(a)), a)
	}
}

func TestAllowlistOpensOnlyItsPrefix(t *testing.T) {
	p := egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	assert.NoError(t, p.Check(netip.MustParseAddr("127.0.0.1")))
	assert.NoError(t, p.Check(netip.MustParseAddr("::ffff:127.0.0.1")))
	assert.Error(t, p.Check(netip.MustParseAddr("::1")))
	assert.Error(t, p.Check(netip.MustParseAddr("10.0.0.1")))
	assert.Error(t, p.Check(netip.MustParseAddr("169.254.169.254")))
}

// fakeResolver answers every name with fixed addresses.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func partner(t *testing.T) (port string, hits *int) {
	t.Helper()
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Port(), &n
}

func TestClientRefusesAHostnameResolvingToLoopbackAtDialTime(t *testing.T) {
	port, hits := partner(t)
	resolver := fakeResolver{"hooks.partner.test": {netip.MustParseAddr("127.0.0.1")}}
	client := egress.NewClient(egress.NewDialer(egress.Policy{}, resolver, time.Second), 2*time.Second, 4)

	_, err := client.Post("http://hooks.partner.test:"+port+"/hook", "application/json", nil)
	require.Error(t, err)
	var fe *egress.ForbiddenError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "loopback", fe.Reason)
	assert.Equal(t, delivery.ClassForbidden, delivery.Classify(delivery.Outcome{Err: err}, time.Now()).Class)
	assert.Zero(t, *hits, "nothing reached the server")

	_, err = client.Post("http://127.0.0.1:"+port+"/hook", "application/json", nil)
	require.ErrorAs(t, err, &fe, "literal addresses are checked too")
	_, err = client.Post("http://[::ffff:127.0.0.1]:"+port+"/hook", "application/json", nil)
	require.ErrorAs(t, err, &fe, "mapped addresses are checked too")
	assert.Zero(t, *hits)
}

func TestClientDialsAllowlistedAndNeverFollowsRedirects(t *testing.T) {
	port, hits := partner(t)
	resolver := fakeResolver{"hooks.partner.test": {netip.MustParseAddr("127.0.0.1")}}
	policy := egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	client := egress.NewClient(egress.NewDialer(policy, resolver, time.Second), 2*time.Second, 4)

	resp, err := client.Post("http://hooks.partner.test:"+port+"/hook", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)

	resp, err = client.Post("http://hooks.partner.test:"+port+"/moved", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusFound, resp.StatusCode, "the 3xx itself is the answer")
	assert.Equal(t, 2, *hits, "the redirect target was never requested")

	_, err = client.Post("http://nowhere.partner.test:"+port+"/hook", "application/json", nil)
	var dnsErr *net.DNSError
	require.True(t, errors.As(err, &dnsErr))
	assert.Equal(t, delivery.ClassDNS, delivery.Classify(delivery.Outcome{Err: err}, time.Now()).Class)
}

// TestTheAllowlistIsSandboxOnly: a development allowlist opens loopback to
// sandbox endpoints and never to live ones (item 5 of "Security, round 2").
func TestTheAllowlistIsSandboxOnly(t *testing.T) {
	dev := egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	loopback := netip.MustParseAddr("127.0.0.1")
	require.NoError(t, dev.CheckFor("sandbox", loopback))
	for _, env := range []string{"live", "", "Sandbox", "prod"} {
		var fe *egress.ForbiddenError
		require.ErrorAs(t, dev.CheckFor(env, loopback), &fe, "environment %q", env)
		assert.Equal(t, "loopback", fe.Reason)
	}
	require.NoError(t, dev.CheckFor("live", netip.MustParseAddr("8.8.8.8")))
}

// TestConnectionsTheAllowlistOpenedAreMarked: the sender keeps nothing of
// an answer over such a connection, plain or under TLS; one the
// allowlist did not open is not marked.
func TestConnectionsTheAllowlistOpenedAreMarked(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	dev := egress.NewDialer(egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, nil, time.Second)
	conn, err := dev.DialContext(context.Background(), "tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	assert.True(t, egress.Allowlisted(conn))
	tlsConn := tls.Client(conn, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a test server's own certificate
	assert.True(t, egress.Allowlisted(tlsConn), "seen through the TLS connection")

	plain, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { plain.Close() })
	assert.False(t, egress.Allowlisted(plain))
	assert.False(t, egress.Allowlisted(nil))
}
