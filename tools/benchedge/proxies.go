package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/valyala/fasthttp"
)

// nginxPath is where Debian installs nginx; without it the nginx rows are
// left out, with the reason printed.
const nginxPath = "/usr/sbin/nginx"

// nginxConf is nginx as an ingress runs it in front of an owner: one
// worker, as a pod of the edge has one CPU (productionEnv), upstream
// keep-alive, default buffer sizes, an access log.
const nginxConf = `worker_processes 1;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log %[1]s/nginx-access.log;
  client_body_temp_path %[1]s/client_body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  upstream filings { server 127.0.0.1:%[3]d; keepalive 64; }
  upstream readiness { server 127.0.0.1:%[4]d; keepalive 64; }
  server {
    listen 127.0.0.1:%[2]d;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $host;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    location /api/x402/ { proxy_pass http://readiness; }
    location / { proxy_pass http://filings; }
  }
}
`

// process is a proxy this command started.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// pids are the processes whose CPU the proxy's row counts: nginx's master
// and workers, or the one process.
func (p *process) pids() []int {
	return append([]int{p.cmd.Process.Pid}, children(p.cmd.Process.Pid)...)
}

func (p *process) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func startProcess(ctx context.Context, name, logPath string, port int, cmd *exec.Cmd) (*process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); log.Close(); close(p.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			conn.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s not listening after 10s; see %s", name, logPath)
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited; see %s", name, logPath)
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startNginx runs nginx in front of filings and readiness.
func startNginx(ctx context.Context, cfg config, dir string) (*process, error) {
	ngxDir := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(ngxDir, 0o755); err != nil {
		return nil, err
	}
	conf := filepath.Join(ngxDir, "nginx.conf")
	body := fmt.Sprintf(nginxConf, ngxDir, cfg.nginxPort(), cfg.filingsPort(), cfg.readinessPort())
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(nginxPath, "-p", ngxDir, "-c", conf, "-e", filepath.Join(ngxDir, "nginx-error.log"))
	return startProcess(ctx, "nginx", filepath.Join(ngxDir, "nginx.log"), cfg.nginxPort(), cmd)
}

// startBareProxy runs one of this command's bare-proxy modes (bare-proxy,
// bare-fasthttp) on port, in front of filings.
func startBareProxy(ctx context.Context, cfg config, dir, mode string, port int) (*process, error) {
	cmd := exec.Command(filepath.Join(cfg.Dir, "tools", "benchedge"), mode,
		"-listen", fmt.Sprintf("127.0.0.1:%d", port),
		"-upstream", fmt.Sprintf("http://127.0.0.1:%d", cfg.filingsPort()))
	cmd.Env = append(os.Environ(), productionEnv()...)
	return startProcess(ctx, mode, filepath.Join(dir, mode+".log"), port, cmd)
}

// proxyFlags reads a bare proxy's address and its owner's http URL.
func proxyFlags(mode string, args []string) (listen string, owner *url.URL, err error) {
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	fs.StringVar(&listen, "listen", "127.0.0.1:0", "address to listen on")
	upstream := fs.String("upstream", "", "the owner's base URL")
	if err := fs.Parse(args); err != nil {
		return "", nil, err
	}
	owner, err = url.Parse(*upstream)
	if err != nil || owner.Scheme != "http" || owner.Host == "" {
		return "", nil, fmt.Errorf("-upstream %q is no http URL", *upstream)
	}
	return listen, owner, nil
}

// runBareProxy is the bare proxy: httputil.ReverseProxy with its defaults
// (http.DefaultTransport) under a plain net/http server, the floor a Go
// reverse proxy starts from.
func runBareProxy(ctx context.Context, args []string) error {
	listen, target, err := proxyFlags("bare-proxy", args)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: listen, Handler: httputil.NewSingleHostReverseProxy(target), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// runBareFastProxy is a bare proxy on fasthttp, whose server and client
// reuse their request and response objects and buffers instead of
// allocating them per request: what a Go proxy with no platform middleware
// reaches on this machine when net/http is not under it, the ceiling of the
// edge's redesign (docs/compatibility.md, "Performance (measured)").
func runBareFastProxy(ctx context.Context, args []string) error {
	listen, target, err := proxyFlags("bare-fasthttp", args)
	if err != nil {
		return err
	}
	owner := &fasthttp.HostClient{Addr: target.Host, MaxConns: 1024}
	srv := &fasthttp.Server{
		ReadTimeout: 30 * time.Second,
		Handler: func(c *fasthttp.RequestCtx) {
			// What httputil.ReverseProxy does too: no hop-by-hop
			// Connection header either way, the client's address
			// stated.
			c.Request.Header.Del("Connection")
			c.Request.Header.Set("X-Forwarded-For", c.RemoteIP().String())
			if err := owner.Do(&c.Request, &c.Response); err != nil {
				c.Error("the owner did not answer: "+err.Error(), fasthttp.StatusBadGateway)
				return
			}
			c.Response.Header.Del("Connection")
		},
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown()
	}()
	return srv.Serve(ln)
}
