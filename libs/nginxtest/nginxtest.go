// Package nginxtest puts a real nginx (the Debian package, nginx-light is
// enough) in front of a test's server: the stand-in for an ingress. Its
// proxy buffers are nginx's defaults, which are also ingress-nginx's: a
// response whose header block exceeds one 4 KiB page becomes 502 "upstream
// sent too big header", as it would in production. Its body limits are the
// chart's: nginx's default 1 MiB everywhere, except the exhibit uploads
// (UploadPaths), which get UploadBodySize and stream to the upstream
// unbuffered, as the chart's upload Ingress has them.
package nginxtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// UploadPaths are the paths of the exhibit uploads (compat-edge's
// proxy.Uploads), written as the chart's upload Ingress writes them: with
// nginx.ingress.kubernetes.io/use-regex, ingress-nginx renders each as a
// case-insensitive regular expression location anchored at its start.
var UploadPaths = []string{
	`/api/cases/[^/]+/evidence$`,
	`/api/disputes/[^/]+/evidence/file$`,
}

// StreamPaths are the paths whose answer may be an event stream held
// open (compat-edge's proxy.Streams: the MCP server's listen streams),
// written as the chart's streams Ingress writes them (a regular
// expression, as use-regex makes every path of the host).
var StreamPaths = []string{`/mcp$`}

// StreamReadTimeout is the stream paths' proxy_read_timeout and
// proxy_send_timeout, in seconds (the chart's
// nginx.ingress.kubernetes.io/proxy-read-timeout there): over the MCP
// server's 9-minute stream lifetime, as the edge's transfer timeout is.
const StreamReadTimeout = "600"

// UploadBodySize is the upload paths' client_max_body_size (the chart's
// nginx.ingress.kubernetes.io/proxy-body-size there): the largest exhibit
// any rules version allows (100 MiB) and its multipart framing.
const UploadBodySize = "110m"

// Server is an nginx owned by one test, stopped when the test ends.
type Server struct {
	// URL is where clients reach nginx: http://127.0.0.1:<port>.
	URL string
	// Dir holds the configuration, the pid file, the logs and the
	// temporary files.
	Dir string

	cmd  *exec.Cmd
	done chan struct{}
}

// Option changes the generated configuration.
type Option func(*config)

type config struct {
	location []string
	http     []string
	workers  int
}

// LocationDirective adds a directive to every proxying location (the
// upload paths' too), such as "proxy_read_timeout 5s;". Without any, nginx
// proxies with its defaults. The stream paths keep their own buffering
// and timeouts: a directive naming one of them is left out there.
func LocationDirective(d string) Option {
	return func(c *config) { c.location = append(c.location, d) }
}

// Workers runs n worker processes instead of one, as a deployment sized
// for its cores would (benchmarks comparing proxies on the same machine).
func Workers(n int) Option {
	return func(c *config) { c.workers = n }
}

// HTTPDirective adds a directive to the http block, such as a log format.
func HTTPDirective(d string) Option {
	return func(c *config) { c.http = append(c.http, d) }
}

// Binary returns the nginx executable: on PATH, or where Debian installs it
// (/usr/sbin is not on every PATH). It returns "" where none is installed.
func Binary() string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Start runs nginx on a free loopback port, proxying every path to
// upstream (host:port) over HTTP/1.1 with keepalive connections, and
// returns once it accepts connections. The test is skipped, saying why,
// where nginx is not installed.
func Start(tb testing.TB, upstream string, opts ...Option) *Server {
	tb.Helper()
	bin := Binary()
	if bin == "" {
		tb.Skip("nginx is not installed (Debian: apt-get install nginx-light); skipping the test behind a real ingress")
	}
	c := config{workers: 1}
	for _, o := range opts {
		o(&c)
	}
	dir := tb.TempDir()
	port, err := freePort()
	if err != nil {
		tb.Fatalf("nginxtest: %v", err)
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Dir: dir, done: make(chan struct{})}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(s.render(upstream, port, c)), 0o600); err != nil {
		tb.Fatalf("nginxtest: %v", err)
	}
	s.cmd = exec.Command(bin, "-c", conf, "-p", dir+"/", "-e", filepath.Join(dir, "error.log"))
	out, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		tb.Fatalf("nginxtest: %v", err)
	}
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := s.cmd.Start(); err != nil {
		tb.Fatalf("nginxtest: starting %s: %v", bin, err)
	}
	go func() {
		_ = s.cmd.Wait()
		_ = out.Close()
		close(s.done)
	}()
	tb.Cleanup(s.stop)
	if err := s.waitReady(port); err != nil {
		tb.Fatalf("nginxtest: %v\n%s", err, s.ErrorLog())
	}
	return s
}

// ErrorLog returns what nginx logged so far: the place to look when it
// answers 502 ("upstream sent too big header while reading response header
// from upstream").
func (s *Server) ErrorLog() string {
	var b strings.Builder
	for _, name := range []string{"stderr.log", "error.log"} {
		if data, err := os.ReadFile(filepath.Join(s.Dir, name)); err == nil {
			b.Write(data)
		}
	}
	return b.String()
}

func (s *Server) render(upstream string, port int, c config) string {
	var b strings.Builder
	// As root, the workers would otherwise run as nobody and could not
	// write their temporary files under the test's directory.
	if os.Geteuid() == 0 {
		b.WriteString("user root;\n")
	}
	fmt.Fprintf(&b, `daemon off;
master_process on;
worker_processes %[6]d;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 512; }
http {
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
%[4]s
    upstream backend {
        server %[2]s;
        keepalive 16;
    }
    server {
        listen 127.0.0.1:%[3]d;
%[5]s    }
}
`, s.Dir, upstream, port, indent(c.http, "    "), locations(c.location), c.workers)
	return b.String()
}

// locations renders the upload locations, then the one for every other
// path; nginx tries regular expressions before a prefix, as ingress-nginx
// orders the longer paths first.
func locations(extra []string) string {
	var b strings.Builder
	for _, p := range UploadPaths {
		fmt.Fprintf(&b, "        location ~* \"^%s\" {\n", p)
		b.WriteString(proxying(extra))
		// Streamed as it arrives: nginx would otherwise write the whole
		// body to disk before the edge saw a byte of it.
		fmt.Fprintf(&b, "            client_max_body_size %s;\n            proxy_request_buffering off;\n        }\n", UploadBodySize)
	}
	for _, p := range StreamPaths {
		fmt.Fprintf(&b, "        location ~* \"^%s\" {\n", p)
		b.WriteString(proxying(streamable(extra)))
		// Passed as they come, and held while quiet.
		fmt.Fprintf(&b, "            proxy_buffering off;\n            proxy_read_timeout %[1]ss;\n            proxy_send_timeout %[1]ss;\n        }\n", StreamReadTimeout)
	}
	b.WriteString("        location / {\n" + proxying(extra) + "        }\n")
	return b.String()
}

// streamable is extra without the directives the stream paths set
// themselves (nginx refuses a directive given twice).
func streamable(extra []string) []string {
	var out []string
	for _, d := range extra {
		if !strings.HasPrefix(d, "proxy_buffering") && !strings.HasPrefix(d, "proxy_read_timeout") && !strings.HasPrefix(d, "proxy_send_timeout") {
			out = append(out, d)
		}
	}
	return out
}

func proxying(extra []string) string {
	return `            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
` + indent(extra, "            ")
}

func indent(lines []string, prefix string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}

func (s *Server) waitReady(port int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-s.done:
			return errors.New("nginx exited during start-up")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nginx not accepting on port %d after 10s: %w", port, err)
		}
	}
}

// stop asks the master for a fast shutdown (SIGTERM), which also ends its
// workers, and kills it only if it has not exited within 10 s.
func (s *Server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
