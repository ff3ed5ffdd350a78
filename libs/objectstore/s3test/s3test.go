// Package s3test runs a real S3-compatible server for tests: SeaweedFS's
// `weed mini` (master, volume server, filer and S3 gateway in one
// process), built from the Go module proxy by `make weed` into bin/weed.
// There is no fake: requests are signed, multipart uploads are assembled
// and aborted, and listings are paged by the server, as in production.
//
// One server runs per test process, started by the first test that asks
// for it and stopped by Main, which the package's TestMain calls; each
// test gets a fresh bucket of its own. A test is skipped, saying to run
// `make weed`, where the binary is absent.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/objectstore"
)

// Server is the test process's weed server.
type Server struct {
	// Endpoint is host:port of the S3 gateway, plain HTTP.
	Endpoint        string
	AccessKeyID     string
	SecretAccessKey string
	// Client is an S3 client of the server with the credentials above,
	// for what a test does behind the store's back (making buckets,
	// listing unfinished multipart uploads).
	Client *minio.Client

	cmd     *exec.Cmd
	exited  chan struct{}
	dataDir string
	logPath string
}

var (
	mu      sync.Mutex
	running *Server
	// startErr keeps a failed start, so every later test fails with its
	// cause instead of trying again.
	startErr error
)

// Binary returns the weed executable: $PCOURT_WEED, or bin/weed at the
// root of the repository (the directory holding go.work) above the
// working directory. It returns "" when neither exists.
func Binary() string {
	if p := os.Getenv("PCOURT_WEED"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			p := filepath.Join(dir, "bin", "weed")
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Start returns the process's server, starting it on first use. The test
// is skipped where there is no weed binary, and fails where it does not
// start.
func Start(tb testing.TB) *Server {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if running != nil {
		return running
	}
	if startErr != nil {
		tb.Fatalf("the S3 test server did not start earlier in this process: %v", startErr)
	}
	bin := Binary()
	if bin == "" {
		tb.Skip("no weed binary ($PCOURT_WEED or bin/weed): run `make weed` to build SeaweedFS's S3 server; the S3 store is not tested")
	}
	running, startErr = start(bin)
	if startErr != nil {
		tb.Fatalf("starting the S3 test server: %v", startErr)
	}
	return running
}

// Main runs the package's tests and then stops the server, if one was
// started, and exits. Call it from TestMain:
//
//	func TestMain(m *testing.M) { s3test.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	if running != nil {
		running.stop()
		running = nil
	}
	mu.Unlock()
	os.Exit(code)
}

// NewBucket creates a bucket with a fresh name and returns the store
// configuration of it.
func (s *Server) NewBucket(tb testing.TB) objectstore.S3Config {
	tb.Helper()
	name := "t-" + randomHex(tb, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Client.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		tb.Fatalf("creating bucket %s: %v", name, err)
	}
	return objectstore.S3Config{
		Endpoint:        s.Endpoint,
		Bucket:          name,
		AccessKeyID:     s.AccessKeyID,
		SecretAccessKey: envconf.Secret(s.SecretAccessKey),
		UseTLS:          false,
		PathStyle:       true,
	}
}

// NewStore starts the server if need be and returns a store of a fresh
// bucket: the common case.
func NewStore(tb testing.TB) *objectstore.S3 {
	tb.Helper()
	cfg := Start(tb).NewBucket(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := objectstore.NewS3(ctx, cfg)
	if err != nil {
		tb.Fatalf("opening bucket %s: %v", cfg.Bucket, err)
	}
	return store
}

// IncompleteUploads lists the multipart uploads begun and neither
// completed nor aborted in bucket, as "key uploadID".
func (s *Server) IncompleteUploads(tb testing.TB, bucket string) []string {
	tb.Helper()
	var out []string
	for u := range s.Client.ListIncompleteUploads(context.Background(), bucket, "", true) {
		if u.Err != nil {
			tb.Fatalf("listing incomplete uploads in %s: %v", bucket, u.Err)
		}
		out = append(out, u.Key+" "+u.UploadID)
	}
	return out
}

// The ports weed mini listens on. Every one is named: mini moves a port it
// finds taken only when the flag was not given, and then the test would
// not know where the S3 gateway went. The extras (WebDAV, the admin UI,
// Iceberg and Lance catalogues) are turned off.
var portFlags = []string{
	"master.port", "master.port.grpc",
	"volume.port", "volume.port.grpc",
	"filer.port", "filer.port.grpc",
	"s3.port", "s3.port.grpc",
}

func start(bin string) (*Server, error) {
	dataDir, err := os.MkdirTemp("", "pcourt-s3test-")
	if err != nil {
		return nil, err
	}
	s := &Server{dataDir: dataDir, logPath: filepath.Join(dataDir, "weed.log"), exited: make(chan struct{})}
	if err := s.launch(bin); err != nil {
		_ = os.RemoveAll(dataDir)
		return nil, err
	}
	return s, nil
}

func (s *Server) launch(bin string) error {
	key, secret, err := randomCredentials()
	if err != nil {
		return err
	}
	s.AccessKeyID, s.SecretAccessKey = key, secret
	configPath := filepath.Join(s.dataDir, "s3.json")
	config, _ := json.Marshal(map[string]any{"identities": []map[string]any{{
		"name":        "pcourt-test",
		"credentials": []map[string]string{{"accessKey": key, "secretKey": secret}},
		"actions":     []string{"Admin", "Read", "List", "Tagging", "Write"},
	}}})
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		return err
	}
	ports, err := freePorts(len(portFlags))
	if err != nil {
		return err
	}
	data := filepath.Join(s.dataDir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return err
	}
	args := []string{"mini",
		"-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-s3.config=" + configPath,
		"-webdav=false", "-admin.ui=false", "-admin.port.legacy=0",
		"-s3.port.iceberg=0", "-s3.port.lance=0",
		"-master.telemetry=false",
		// Small volumes: the tests store a few hundred megabytes at most.
		"-master.volumeSizeLimitMB=256", "-volume.preStopSeconds=0",
	}
	for i, flag := range portFlags {
		args = append(args, fmt.Sprintf("-%s=%d", flag, ports[i]))
	}
	s.Endpoint = "127.0.0.1:" + strconv.Itoa(ports[slices.Index(portFlags, "s3.port")])
	logFile, err := os.Create(s.logPath)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child holds its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.dataDir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The server dies with the test process even when Main is not
	// reached (a panic, a timeout, a missing TestMain).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	s.cmd = cmd
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	s.Client, err = minio.New(s.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(key, secret, ""),
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		s.stop()
		return err
	}
	if err := s.waitReady(); err != nil {
		log, _ := os.ReadFile(s.logPath)
		s.stop()
		return fmt.Errorf("%w\n%s", err, tail(log, 4000))
	}
	return nil
}

// waitReady polls the S3 gateway until it answers a signed request with
// success: the filer and the volume server behind it are up by then.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(60 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return errors.New("weed exited during start")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := s.Client.ListBuckets(ctx)
		cancel()
		if err == nil {
			return nil
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond) // polling a process that is starting; nothing to wait on
	}
	return fmt.Errorf("S3 gateway at %s not ready after 60s: %v", s.Endpoint, lastErr)
}

// stop ends weed and its data: SIGTERM, then SIGKILL after ten seconds.
func (s *Server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.exited
		}
	}
	_ = os.RemoveAll(s.dataDir)
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	// Held open together, so that no two are the same.
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomCredentials() (string, string, error) {
	b := make([]byte, 30)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	return "PCTEST" + hex.EncodeToString(b[:7]), hex.EncodeToString(b[7:]), nil
}

func randomHex(tb testing.TB, n int) string {
	tb.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatalf("random bucket name: %v", err)
	}
	return hex.EncodeToString(b)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return b
}
