package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTheRetryDialsAnotherAddressFirst(t *testing.T) {
	for _, tc := range []struct {
		ips   []string
		avoid string
		want  []string
	}{
		{[]string{"10.0.0.1", "10.0.0.2"}, "10.0.0.1:8080", []string{"10.0.0.2:8080", "10.0.0.1:8080"}},
		{[]string{"10.0.0.1", "10.0.0.2"}, "10.0.0.2:8080", []string{"10.0.0.1:8080", "10.0.0.2:8080"}},
		{[]string{"10.0.0.1"}, "10.0.0.1:8080", []string{"10.0.0.1:8080"}},
		{[]string{"10.0.0.1", "fd00::2"}, "", []string{"10.0.0.1:8080", "[fd00::2]:8080"}},
	} {
		require.Equal(t, tc.want, preferOtherAddresses(tc.ips, "8080", tc.avoid), "avoiding %q", tc.avoid)
	}
}

func TestABodyIsReplayedOnlyWithinItsBoundAndOnceTheFirstAttemptClosedIt(t *testing.T) {
	src := strings.Repeat("a", 100) + strings.Repeat("b", 100)
	b := &replayableBody{src: io.NopCloser(strings.NewReader(src)), limit: 150}
	p := make([]byte, 100)
	n, err := b.Read(p)
	require.NoError(t, err)
	require.Equal(t, 100, n)
	_, ok := b.replay()
	require.False(t, ok, "the first attempt may still be reading")
	require.NoError(t, b.Close())
	replay, ok := b.replay()
	require.True(t, ok)
	got, err := io.ReadAll(replay)
	require.NoError(t, err)
	require.Equal(t, src, string(got), "the bytes the first attempt read, then the rest")
	_, err = b.Read(p)
	require.ErrorIs(t, err, http.ErrBodyReadAfterClose, "the first attempt reads no more")

	big := &replayableBody{src: io.NopCloser(strings.NewReader(src)), limit: 150}
	_, err = io.ReadAll(big)
	require.NoError(t, err)
	require.NoError(t, big.Close())
	_, ok = big.replay()
	require.False(t, ok, "more than the bound was written: not kept, not replayed")
}
