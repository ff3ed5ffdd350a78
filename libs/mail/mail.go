// Package mail sends the platform's few e-mails over SMTP with net/smtp
// (the compat-controller's milestone notices, the accounts service's
// sign-in codes): one connection per message, STARTTLS when the server
// offers it (or required), and PLAIN authentication when configured.
// Each service reads the same seven settings under its own prefix
// (FromEnv: EDGE_SMTP_*, PEOPLE_SMTP_*).
package mail

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
)

// TLSMode says when the connection is upgraded with STARTTLS.
type TLSMode string

// The modes.
const (
	// TLSAuto upgrades when the server offers STARTTLS.
	TLSAuto TLSMode = "auto"
	// TLSRequired refuses to send over a server that does not offer it.
	TLSRequired TLSMode = "on"
	// TLSOff never upgrades (a relay on the pod's own network).
	TLSOff TLSMode = "off"
)

// Config is the SMTP server and the sender (<prefix>HOST, …).
type Config struct {
	// Prefix is the settings' prefix ("EDGE_SMTP_"), which Validate's
	// errors name.
	Prefix string

	// Host empty turns mail off.
	Host     string
	Port     int
	From     string
	Username string
	Password envconf.Secret
	TLS      TLSMode
	// Timeout bounds one message: dial, conversation and data.
	Timeout time.Duration
	// HelloName is what the sender says in EHLO.
	HelloName string
}

// DefaultConfig sends nothing until a host is set. The sender's address
// and EHLO name are the compat-controller's unless the service sets its
// own.
func DefaultConfig() Config {
	return Config{Prefix: "SMTP_", Port: 587, From: "compatibility@pcourt.dev", TLS: TLSAuto, Timeout: 30 * time.Second, HelloName: "compat-edge"}
}

// FromEnv reads the settings under prefix over def: HOST (empty: mail
// off), PORT, FROM, USERNAME, PASSWORD (a secret), STARTTLS (auto, on,
// off) and TIMEOUT.
func FromEnv(r *envconf.Reader, prefix string, def Config) Config {
	c := def
	c.Prefix = prefix
	c.Host = r.String(prefix+"HOST", def.Host)
	c.Port = r.Int(prefix+"PORT", def.Port)
	c.From = r.String(prefix+"FROM", def.From)
	c.Username = r.String(prefix+"USERNAME", def.Username)
	c.Password = r.Secret(prefix + "PASSWORD")
	c.TLS = TLSMode(r.String(prefix+"STARTTLS", string(def.TLS)))
	c.Timeout = r.Duration(prefix+"TIMEOUT", def.Timeout)
	return c
}

// Enabled reports whether a server is configured.
func (c Config) Enabled() bool { return c.Host != "" }

// Validate reports an unusable setting.
func (c Config) Validate() error {
	var errs []error
	if c.Port <= 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("%sPORT=%d is not a port", c.Prefix, c.Port))
	}
	if c.TLS != TLSAuto && c.TLS != TLSRequired && c.TLS != TLSOff {
		errs = append(errs, fmt.Errorf("%sSTARTTLS=%q is not auto, on or off", c.Prefix, c.TLS))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("%sTIMEOUT must be positive", c.Prefix))
	}
	if c.Enabled() && !validAddress(c.From) {
		errs = append(errs, fmt.Errorf("%sFROM=%q is not an address", c.Prefix, c.From))
	}
	if (c.Username == "") != (c.Password == "") {
		errs = append(errs, fmt.Errorf("%sUSERNAME and %sPASSWORD go together", c.Prefix, c.Prefix))
	}
	return errors.Join(errs...)
}

// validAddress accepts a bare addr-spec without anything that could break
// out of a header or an SMTP command.
func validAddress(a string) bool {
	local, domain, ok := strings.Cut(a, "@")
	return ok && local != "" && domain != "" && len(a) <= 254 && !strings.ContainsAny(a, " \t\r\n<>,;:\"()[]\\") && !strings.Contains(domain, "@")
}

// ValidAddress reports whether a is a plain address the sender will mail.
func ValidAddress(a string) bool { return validAddress(a) }

// Message is one plain-text e-mail.
type Message struct {
	To      string
	Subject string
	Body    string
	// Headers are extra header fields (no CR or LF in names or values).
	Headers map[string]string
}

// Sender sends messages.
type Sender struct {
	cfg Config
	now func() time.Time
}

// New returns a sender over cfg.
func New(cfg Config, now func() time.Time) *Sender { return &Sender{cfg: cfg, now: now} }

// Send delivers one message. An error means the server did not accept it.
func (s *Sender) Send(ctx context.Context, m Message) error {
	if !validAddress(m.To) {
		return fmt.Errorf("recipient %q is not an address", m.To)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("dialling %s: %w", addr, err)
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	c, err := smtp.NewClient(conn, s.cfg.Host)
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("smtp greeting from %s: %w", addr, err)
	}
	defer c.Close()
	if err := c.Hello(s.cfg.HelloName); err != nil {
		return fmt.Errorf("smtp EHLO: %w", err)
	}
	if s.cfg.TLS != TLSOff {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(&tls.Config{ServerName: s.cfg.Host, MinVersion: tls.VersionTLS12}); err != nil {
				return fmt.Errorf("smtp STARTTLS: %w", err)
			}
		} else if s.cfg.TLS == TLSRequired {
			return fmt.Errorf("smtp server %s does not offer STARTTLS (%sSTARTTLS=on)", addr, s.cfg.Prefix)
		}
	}
	if s.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.cfg.Username, s.cfg.Password.Reveal(), s.cfg.Host)); err != nil {
			return fmt.Errorf("smtp AUTH: %w", err)
		}
	}
	if err := c.Mail(s.cfg.From); err != nil {
		return fmt.Errorf("smtp MAIL FROM: %w", err)
	}
	if err := c.Rcpt(m.To); err != nil {
		return fmt.Errorf("smtp RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtp DATA: %w", err)
	}
	if _, err := w.Write(s.render(m)); err != nil {
		return fmt.Errorf("smtp data: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp end of data: %w", err)
	}
	return c.Quit()
}

// render writes the message with CRLF line ends, as the wire wants.
func (s *Sender) render(m Message) []byte {
	var b strings.Builder
	header := func(k, v string) {
		b.WriteString(k + ": " + strings.NewReplacer("\r", "", "\n", "").Replace(v) + "\r\n")
	}
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	_, domain, _ := strings.Cut(s.cfg.From, "@")
	header("From", s.cfg.From)
	header("To", m.To)
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	header("Date", s.now().UTC().Format(time.RFC1123Z))
	header("Message-ID", "<"+hex.EncodeToString(id)+"@"+domain+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "8bit")
	for k, v := range m.Headers {
		header(k, v)
	}
	b.WriteString("\r\n")
	body := strings.ReplaceAll(strings.ReplaceAll(m.Body, "\r\n", "\n"), "\n", "\r\n")
	b.WriteString(body)
	if !strings.HasSuffix(body, "\r\n") {
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}
