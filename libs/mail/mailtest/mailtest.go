// Package mailtest is a small SMTP server for tests and local runs: it
// speaks enough of RFC 5321 (EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP,
// QUIT) over net/textproto to receive what net/smtp sends, keeps every
// message, and can be told to refuse the next messages.
package mailtest

import (
	"bytes"
	"net"
	"net/mail"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"
)

// Received is one message as the server got it.
type Received struct {
	From string
	To   []string
	Data []byte
}

// Parse reads the message's header and body.
func (r Received) Parse(tb testing.TB) *mail.Message {
	tb.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(r.Data))
	if err != nil {
		tb.Fatalf("parsing a received message: %v", err)
	}
	return m
}

// Server is a running SMTP server.
type Server struct {
	ln     net.Listener
	mu     sync.Mutex
	msgs   []Received
	refuse int
	wg     sync.WaitGroup
}

// Start runs a server on a free loopback port until the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		tb.Fatalf("starting the SMTP server: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Listen runs a server on addr until Close.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Host and Port are where the server listens.
func (s *Server) Host() string { return s.ln.Addr().(*net.TCPAddr).IP.String() }

// Port is the server's port.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops the server and waits for its connections.
func (s *Server) Close() {
	_ = s.ln.Close()
	s.wg.Wait()
}

// Messages returns what was received so far.
func (s *Server) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.msgs...)
}

// RefuseNext makes the server answer the next n messages' DATA with 451.
func (s *Server) RefuseNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = n
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			s.serve(textproto.NewConn(c))
		}()
	}
}

func (s *Server) serve(tc *textproto.Conn) {
	reply := func(code int, msg string) bool { return tc.PrintfLine("%d %s", code, msg) == nil }
	if !reply(220, "mailtest ready") {
		return
	}
	var cur Received
	for {
		line, err := tc.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			if tc.PrintfLine("250-mailtest") != nil || !reply(250, "8BITMIME") {
				return
			}
		case "HELO", "NOOP":
			reply(250, "ok")
		case "RSET":
			cur = Received{}
			reply(250, "ok")
		case "MAIL":
			cur = Received{From: address(arg, "FROM:")}
			reply(250, "ok")
		case "RCPT":
			if cur.From == "" {
				reply(503, "MAIL first")
				continue
			}
			cur.To = append(cur.To, address(arg, "TO:"))
			reply(250, "ok")
		case "DATA":
			if len(cur.To) == 0 {
				reply(503, "RCPT first")
				continue
			}
			if !reply(354, "end with <CRLF>.<CRLF>") {
				return
			}
			data, err := tc.ReadDotBytes()
			if err != nil {
				return
			}
			s.mu.Lock()
			refused := s.refuse > 0
			if refused {
				s.refuse--
			} else {
				cur.Data = data
				s.msgs = append(s.msgs, cur)
			}
			s.mu.Unlock()
			if refused {
				reply(451, "try again later")
			} else {
				reply(250, "queued")
			}
			cur = Received{}
		case "QUIT":
			reply(221, "bye")
			return
		default:
			// RFC 5321, 4.2.4: a command the server does not offer (a
			// real server's answer to VRFY, EXPN and the like).
			reply(502, "command not implemented")
		}
	}
}

// address takes the path out of "FROM:<a@b> SIZE=…".
func address(arg, prefix string) string {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return ""
	}
	p := strings.TrimSpace(arg[len(prefix):])
	if i := strings.IndexByte(p, ' '); i >= 0 {
		p = p[:i]
	}
	return strings.TrimSuffix(strings.TrimPrefix(p, "<"), ">")
}
