package mail_test

import (
	"context"
	"io"
	"mime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/libs/mail/mailtest"
)

func TestConfigValidate(t *testing.T) {
	ok := mail.DefaultConfig()
	ok.Host = "smtp.example"
	require.NoError(t, ok.Validate())
	require.NoError(t, mail.DefaultConfig().Validate(), "no host: mail off, valid")
	for _, tc := range []struct {
		name   string
		mutate func(*mail.Config)
	}{
		{"a port out of range", func(c *mail.Config) { c.Port = 70000 }},
		{"an unknown TLS mode", func(c *mail.Config) { c.TLS = "sometimes" }},
		{"no timeout", func(c *mail.Config) { c.Timeout = 0 }},
		{"a sender that is not an address", func(c *mail.Config) { c.From = "compat edge" }},
		{"a header injection in the sender", func(c *mail.Config) { c.From = "a@b\r\nBcc: x@y" }},
		{"a user without password", func(c *mail.Config) { c.Username = "u" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mutate(&c)
			require.Error(t, c.Validate())
		})
	}
}

// Each service reads the same settings under its own prefix, and an
// unusable one is named as the service's operator wrote it.
func TestFromEnvReadsTheServicesOwnPrefix(t *testing.T) {
	vars := map[string]string{"PEOPLE_SMTP_HOST": "smtp.example", "PEOPLE_SMTP_PORT": "2525", "PEOPLE_SMTP_FROM": "accounts@pcourt.dev",
		"PEOPLE_SMTP_USERNAME": "u", "PEOPLE_SMTP_PASSWORD": "p", "PEOPLE_SMTP_STARTTLS": "on", "PEOPLE_SMTP_TIMEOUT": "5s",
		"EDGE_SMTP_HOST": "edge.example"}
	r := envconf.New(func(k string) string { return vars[k] })
	c := mail.FromEnv(r, "PEOPLE_SMTP_", mail.DefaultConfig())
	require.NoError(t, r.Err())
	require.NoError(t, c.Validate())
	require.Equal(t, "smtp.example", c.Host)
	require.Equal(t, 2525, c.Port)
	require.Equal(t, "accounts@pcourt.dev", c.From)
	require.Equal(t, "p", c.Password.Reveal())
	require.Equal(t, mail.TLSRequired, c.TLS)
	require.Equal(t, 5*time.Second, c.Timeout)

	vars["PEOPLE_SMTP_STARTTLS"] = "maybe"
	err := mail.FromEnv(envconf.New(func(k string) string { return vars[k] }), "PEOPLE_SMTP_", mail.DefaultConfig()).Validate()
	require.ErrorContains(t, err, "PEOPLE_SMTP_STARTTLS")
}

func TestSendOverSMTP(t *testing.T) {
	ctx := context.Background()
	srv := mailtest.Start(t)
	cfg := mail.DefaultConfig()
	cfg.Host, cfg.Port, cfg.TLS = srv.Host(), srv.Port(), mail.TLSAuto
	now := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	s := mail.New(cfg, func() time.Time { return now })

	require.NoError(t, s.Send(ctx, mail.Message{To: "ops@a.example", Subject: "Sunset für v2", Body: "line one\n.\nline three",
		Headers: map[string]string{"X-PC-Notice": "v2-cases/cred_a/window-start\r\nBcc: evil@x"}}))
	msgs := srv.Messages()
	require.Len(t, msgs, 1)
	require.Equal(t, cfg.From, msgs[0].From)
	require.Equal(t, []string{"ops@a.example"}, msgs[0].To)
	m := msgs[0].Parse(t)
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	require.NoError(t, err)
	require.Equal(t, "Sunset für v2", subject)
	require.Equal(t, "v2-cases/cred_a/window-startBcc: evil@x", m.Header.Get("X-PC-Notice"), "no header injection")
	require.Empty(t, m.Header.Get("Bcc"))
	body, err := io.ReadAll(m.Body)
	require.NoError(t, err)
	require.Equal(t, "line one\n.\nline three\n", string(body), "a lone dot survives dot-stuffing")

	require.Error(t, s.Send(ctx, mail.Message{To: "not an address", Subject: "x", Body: "x"}))

	srv.RefuseNext(1)
	require.ErrorContains(t, s.Send(ctx, mail.Message{To: "ops@a.example", Subject: "x", Body: "x"}), "451")

	cfg.TLS = mail.TLSRequired
	require.ErrorContains(t, mail.New(cfg, time.Now).Send(ctx, mail.Message{To: "ops@a.example", Subject: "x", Body: "x"}), "STARTTLS")
	require.Len(t, srv.Messages(), 1, "nothing sent without the required TLS")

	srv.Close()
	cfg.TLS = mail.TLSOff
	require.Error(t, mail.New(cfg, time.Now).Send(ctx, mail.Message{To: "ops@a.example", Subject: "x", Body: "x"}), "a server that is gone")
}
