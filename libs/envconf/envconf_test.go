package envconf_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestReader(t *testing.T) {
	r := envconf.New(env(map[string]string{
		"ADDR": ":9000", "BROKERS": "a:1, b:2,,", "N": "7", "D": "250ms", "B": "true",
	}))
	require.Equal(t, ":9000", r.String("ADDR", ":8080"))
	require.Equal(t, "def", r.String("UNSET", "def"))
	require.Equal(t, []string{"a:1", "b:2"}, r.List("BROKERS", nil))
	require.Equal(t, 7, r.Int("N", 1))
	require.Equal(t, 250*time.Millisecond, r.Duration("D", time.Second))
	require.True(t, r.Bool("B", false))
	require.NoError(t, r.Err())
}

func TestReaderNamesEveryBadValue(t *testing.T) {
	r := envconf.New(env(map[string]string{"N": "seven", "D": "soon", "B": "maybe"}))
	require.Equal(t, 1, r.Int("N", 1))
	require.Equal(t, time.Second, r.Duration("D", time.Second))
	require.False(t, r.Bool("B", false))
	err := r.Err()
	require.Error(t, err)
	for _, name := range []string{"N=", "D=", "B="} {
		require.Contains(t, err.Error(), name)
	}
}

func TestSecretNeverPrints(t *testing.T) {
	type cfg struct{ Token envconf.Secret }
	c := cfg{Token: envconf.Secret("s3cr3t")}
	js, err := json.Marshal(c)
	require.NoError(t, err)
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "config", c)
	for _, out := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), string(js), logged.String()} {
		require.NotContains(t, out, "s3cr3t")
	}
	require.Equal(t, "s3cr3t", c.Token.Reveal())
}
