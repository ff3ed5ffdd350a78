package e2e_test

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"math/big"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

// The images `make images` builds; the stack uses nothing else. The Go
// binaries' images are pcourt/<name>:$E2E_IMAGE_TAG (default dev), so a
// checkout's own build can be tagged apart from the others' on a shared
// engine; redis and nginx (`make images-deps`) are always :dev.
var (
	imageTag         = cmp.Or(os.Getenv("E2E_IMAGE_TAG"), "dev")
	imageRedis       = "pcourt/redis:dev"
	imageBroker      = "pcourt/kafka-broker:" + imageTag
	imageFacilitator = "pcourt/facilitator:" + imageTag
	imageReceiver    = "pcourt/webhook-receiver:" + imageTag
	imageNginx       = "pcourt/nginx:dev"
	imageEdge        = "pcourt/compat-edge:" + imageTag
)

// statelessServices are the services run with two replicas behind the
// edge, each reached by its name on the network (Docker's DNS answers
// both replicas' addresses, as a Kubernetes Service does), on its port.
var statelessServices = []struct {
	name string
	port int
}{
	{"readiness", 8081}, {"filings", 8082}, {"cases", 8083}, {"webhooks", 8084}, {"console", 8088}, {"accounts", 8089},
	{"mcp", 8090},
}

const (
	edgePort        = 8080
	facilitatorPort = 8085
	receiverPort    = 8090
	replicas        = 2
	// startTimeout bounds the wait for one container's /readyz.
	startTimeout = 90 * time.Second
)

// skipUnlessE2E keeps the package out of `make test`: the stack takes
// minutes and a Docker engine. `make e2e` sets E2E=1.
func skipUnlessE2E(t *testing.T) {
	t.Helper()
	if os.Getenv("E2E") != "1" {
		t.Skip("the container end-to-end tests run with E2E=1 (make e2e)")
	}
	// Before testcontainers reads its configuration (once per process):
	// Ryuk is a pulled image and this machine reaches no registry (every
	// container and the network are removed by the test's cleanup), and the
	// ports are published on loopback only, which is where the test must
	// dial them even when it runs inside a container itself.
	for k, v := range map[string]string{"TESTCONTAINERS_RYUK_DISABLED": "true", "TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1"} {
		if os.Getenv(k) != v {
			t.Setenv(k, v)
		}
	}
	testcontainers.SkipIfProviderIsNotHealthy(t)
	// The figures are logged with -v; the library's per-container chatter
	// is not (a failed start prints the container's last log lines).
	tclog.SetDefault(tclog.NewNoopLogger())
}

// replica is one running container of the stack.
type replica struct {
	name      string // the container's role and index, e.g. "cases-1"
	service   string // the service it runs, e.g. "cases"
	index     int    // 1 or 2
	adminPort string // "9083/tcp", where /readyz answers
	c         *testcontainers.DockerContainer
}

// stack is the whole system on one Docker network.
type stack struct {
	t           *testing.T
	docker      client.APIClient
	network     string
	subnet      netip.Prefix
	ingress     string // http://127.0.0.1:<port> of nginx
	redis       *testcontainers.DockerContainer
	broker      *testcontainers.DockerContainer
	facilitator *testcontainers.DockerContainer
	receiver    *testcontainers.DockerContainer
	nginx       *testcontainers.DockerContainer
	// services by name ("readiness", …, "compat-edge"), two replicas each.
	services map[string][]*replica
	payTo    string

	mu  sync.Mutex
	rdb *redis.Client // to the mapped Redis port; remade after a Redis restart
}

// startStack starts every container and returns once each answers its
// /readyz. Everything is removed when the test ends.
func startStack(t *testing.T) *stack {
	t.Helper()
	ctx := context.Background()
	begun := time.Now()
	provider, err := testcontainers.NewDockerProvider()
	require.NoError(t, err)
	t.Cleanup(func() { _ = provider.Close() })
	s := &stack{t: t, docker: provider.Client(), services: map[string][]*replica{},
		payTo: localfacilitator.DevAccounts()[1].Address.Hex()}
	s.requireLocalImages(ctx)
	s.createNetwork(ctx)

	// Redis: AOF with an fsync per write (the image's command line), data
	// in the image's /data volume, which survives a kill and a restart of
	// the container.
	s.redis = s.run(ctx, "redis", imageRedis, []string{"redis"}, nil, "6379/tcp",
		wait.ForListeningPort("6379/tcp"), nil)
	s.broker = s.run(ctx, "kafka", imageBroker, []string{"kafka"},
		map[string]string{"KAFKA_ADVERTISED_ADDR": "kafka:9092"}, "9092/tcp",
		wait.ForLog("kafka-broker listening"), nil)
	facToken := randomHex(16)
	s.facilitator = s.run(ctx, "facilitator", imageFacilitator, []string{"facilitator"}, map[string]string{
		"FACILITATOR_ADDR":              fmt.Sprintf(":%d", facilitatorPort),
		"FACILITATOR_TOKEN":             facToken,
		"FACILITATOR_FUND_DEV_ACCOUNTS": "true",
		"REDIS_ADDRS":                   "redis:6379",
	}, fmt.Sprintf("%d/tcp", facilitatorPort+1000), readyz(facilitatorPort+1000), nil)

	// nginx first, on the edges' fixed addresses, so that its published
	// port is the public URL the services put into x402 resources.
	s.nginx = s.run(ctx, "nginx", imageNginx, []string{"ingress"}, nil, "8080/tcp",
		wait.ForHTTP("/healthz").WithPort("8080/tcp"), nil, testcontainers.ContainerFile{
			Reader: strings.NewReader(s.nginxConfig()), ContainerFilePath: "/etc/nginx/conf.d/default.conf", FileMode: 0o644,
		})
	s.ingress = s.endpoint(ctx, s.nginx, "8080/tcp")

	common := map[string]string{
		"REDIS_ADDRS":          "redis:6379",
		"KAFKA_BROKERS":        "kafka:9092",
		"LOG_LEVEL":            "info",
		"HTTP_TRUSTED_PROXIES": s.subnet.String(),
	}
	keyFiles := map[string]map[string]string{"webhooks": signingKeyFiles(t), "cases": awardKeyFiles(t)}
	mcpClient := map[string]string{"MCP_CLIENT_ID": "ocl_mcp", "MCP_CLIENT_SECRET": "pc_ocs_" + randomHex(24)}
	own := map[string]map[string]string{
		"readiness": {
			"FACILITATOR_URL":         fmt.Sprintf("http://facilitator:%d", facilitatorPort),
			"FACILITATOR_AUTH_HEADER": "Bearer " + facToken,
			"READINESS_PAY_TO":        s.payTo,
			"READINESS_ENVIRONMENT":   "sandbox",
			"PUBLIC_BASE_URL":         s.ingress,
		},
		"filings": {
			"FACILITATOR_URL":         fmt.Sprintf("http://facilitator:%d", facilitatorPort),
			"FACILITATOR_AUTH_HEADER": "Bearer " + facToken,
			"FEES_PAY_TO":             s.payTo,
			"PUBLIC_BASE_URL":         s.ingress,
		},
		// Both replicas sign awards with the same key, mounted as a
		// Secret would be.
		"cases": {
			"PUBLIC_BASE_URL":        s.ingress,
			"AWARD_SIGNING_KEYS_DIR": "/etc/pcourt/award-keys",
			"EVIDENCE_STORE_DIR":     "/var/lib/pcourt/evidence",
			"EVIDENCE_SPOOL_DIR":     "/var/spool/pcourt-evidence",
		},
		// Both replicas sign with the same keys, mounted as a Secret would
		// be; callbacks go to http endpoints on this network only.
		"webhooks": {
			"WEBHOOK_SIGNING_KEYS_DIR":   "/etc/pcourt/webhook-keys",
			"WEBHOOK_ALLOW_HTTP_SANDBOX": "true",
			"WEBHOOK_EGRESS_ALLOW_CIDRS": s.subnet.String(),
		},
		// The partner console's pages are reached at the ingress's origin;
		// it calls the public API back through the edge.
		"console": {
			"CONSOLE_API_URL": fmt.Sprintf("http://edge:%d", edgePort),
			"PUBLIC_BASE_URL": s.ingress,
		},
		// The OAuth issuer, and its tokens' audience, is the ingress's
		// origin, where clients reach the authorization server. It knows
		// the MCP server's resource and platform client, which the mcp
		// service exchanges tokens as, calling the API and the token
		// endpoint back through the edge.
		"accounts": merge(mcpClient, map[string]string{
			"PUBLIC_BASE_URL":  s.ingress,
			"MCP_RESOURCE_URL": s.ingress + "/mcp",
		}),
		"mcp": merge(mcpClient, map[string]string{
			"PUBLIC_BASE_URL": s.ingress,
			"MCP_API_URL":     fmt.Sprintf("http://edge:%d", edgePort),
		}),
	}
	for _, svc := range statelessServices {
		env := merge(common, own[svc.name], map[string]string{
			"HTTP_ADDR":  fmt.Sprintf(":%d", svc.port),
			"ADMIN_ADDR": fmt.Sprintf(":%d", svc.port+1000),
		})
		for i := 1; i <= replicas; i++ {
			var files []testcontainers.ContainerFile
			for path, content := range keyFiles[svc.name] { // a reader each: a reader is read once
				files = append(files, testcontainers.ContainerFile{Reader: strings.NewReader(content), ContainerFilePath: path, FileMode: 0o644})
			}
			s.addReplica(ctx, svc.name, i, "pcourt/"+svc.name+":"+imageTag, env, svc.port+1000, netip.Addr{}, files...)
		}
	}
	edgeEnv := merge(common, map[string]string{
		"HTTP_ADDR":         fmt.Sprintf(":%d", edgePort),
		"ADMIN_ADDR":        fmt.Sprintf(":%d", edgePort+1000),
		"HTTP_TRUSTED_HOPS": "1", // nginx
		"EDGE_PUBLIC_URL":   s.ingress,
	})
	for _, svc := range statelessServices {
		edgeEnv[fmt.Sprintf("UPSTREAM_%s_URL", strings.ToUpper(svc.name))] = fmt.Sprintf("http://%s:%d", svc.name, svc.port)
	}
	for i := 1; i <= replicas; i++ {
		s.addReplica(ctx, "compat-edge", i, imageEdge, edgeEnv, edgePort+1000, s.edgeAddr(i))
	}

	// The partner's receiver starts once its endpoint is registered
	// (registerReceiver): it verifies deliveries are signed for that id.
	t.Logf("stack up in %s: nginx at %s, %d containers", time.Since(begun).Round(time.Millisecond), s.ingress, 6+len(s.all()))
	return s
}

// startReceiver runs the partner's receiver for endpointID: it verifies
// with the keys the edge publishes, and that each delivery was signed for
// its endpoint.
func (s *stack) startReceiver(ctx context.Context, endpointID string) {
	s.receiver = s.run(ctx, "receiver", imageReceiver, []string{"receiver"}, nil, fmt.Sprintf("%d/tcp", receiverPort),
		wait.ForLog("webhook receiver listening"), []string{
			"-addr", fmt.Sprintf(":%d", receiverPort), "-path", "/pcourt-events", "-env", "sandbox", "-endpoint", endpointID,
			"-jwks", fmt.Sprintf("http://edge:%d/api/webhooks/keys?environment=sandbox", edgePort),
		})
}

// requireLocalImages fails at once, saying what to run, when an image is
// missing: nothing is ever pulled (this machine reaches no registry, and a
// pulled image is not the one this checkout built).
func (s *stack) requireLocalImages(ctx context.Context) {
	images := []string{imageRedis, imageBroker, imageFacilitator, imageReceiver, imageNginx, imageEdge}
	for _, svc := range statelessServices {
		images = append(images, "pcourt/"+svc.name+":"+imageTag)
	}
	for _, img := range images {
		if _, err := s.docker.ImageInspect(ctx, img); err != nil {
			s.t.Fatalf("image %s is not in the local Docker engine (%v): run `make images` first; the e2e never pulls", img, err)
		}
	}
}

// createNetwork makes the test's own network with a subnet of its own, so
// that the two edges have fixed addresses nginx's upstream block names
// (open-source nginx resolves upstream names once, at start).
func (s *stack) createNetwork(ctx context.Context) {
	var lastErr error
	for range 8 {
		n, err := rand.Int(rand.Reader, big.NewInt(200*250))
		require.NoError(s.t, err)
		a, b := 20+n.Int64()/250, n.Int64()%250
		subnet := netip.MustParsePrefix(fmt.Sprintf("10.%d.%d.0/24", a, b))
		nw, err := tcnetwork.New(ctx, tcnetwork.WithIPAM(&network.IPAM{Config: []network.IPAMConfig{{
			Subnet:  subnet,
			IPRange: netip.MustParsePrefix(fmt.Sprintf("10.%d.%d.0/25", a, b)), // dynamic addresses; .200 and up are fixed
		}}}))
		if err != nil {
			lastErr = err
			continue
		}
		s.t.Cleanup(func() { _ = nw.Remove(context.Background()) })
		s.network, s.subnet = nw.Name, subnet
		return
	}
	s.t.Fatalf("creating the test's network: %v", lastErr)
}

func (s *stack) edgeAddr(i int) netip.Addr {
	a := s.subnet.Addr().As4()
	a[3] = byte(200 + i)
	return netip.AddrFrom4(a)
}

// nginxConfig is the ingress: both edges upstream, nginx's default buffer
// sizes (one 4 KiB page for a response's header block, as ingress-nginx),
// and nginx's default proxy_next_upstream (error timeout: a request that
// could not be sent to one edge goes to the other).
//
// down names an edge (1 or 2) taken out of rotation, as the ingress
// controller takes out a terminating pod's endpoint; 0 is none.
func (s *stack) nginxConfig(down ...int) string {
	servers := ""
	for i := 1; i <= replicas; i++ {
		mark := ""
		for _, d := range down {
			if d == i {
				mark = " down"
			}
		}
		servers += fmt.Sprintf("    server %s:%d%s;\n", s.edgeAddr(i), edgePort, mark)
	}
	return fmt.Sprintf(`upstream edge {
%s    keepalive 32;
}
server {
    listen 8080 default_server;
    location = /healthz {
        default_type text/plain;
        return 200 "ok\n";
    }
    location / {
        proxy_pass http://edge;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
    }
}
`, servers)
}

// reconfigureIngress writes nginx's configuration with the given edges
// out of rotation and reloads it: new workers take the new upstream set,
// the old ones finish their requests.
func (s *stack) reconfigureIngress(ctx context.Context, down ...int) {
	s.t.Helper()
	require.NoError(s.t, s.nginx.CopyToContainer(ctx, []byte(s.nginxConfig(down...)), "/etc/nginx/conf.d/default.conf", 0o644))
	code, out, err := s.nginx.Exec(ctx, []string{"nginx", "-s", "reload"})
	require.NoError(s.t, err)
	if code != 0 {
		b, _ := io.ReadAll(out)
		s.t.Fatalf("nginx -s reload: exit %d: %s", code, b)
	}
}

// addReplica starts replica i of a service; a valid addr fixes its address.
func (s *stack) addReplica(ctx context.Context, service string, i int, image string, env map[string]string, adminPort int, addr netip.Addr, files ...testcontainers.ContainerFile) {
	name := fmt.Sprintf("%s-%d", service, i)
	alias := service
	if service == "compat-edge" {
		alias = "edge"
	}
	env = merge(env, map[string]string{"POD_NAME": name})
	port := fmt.Sprintf("%d/tcp", adminPort)
	var fixed func(map[string]*network.EndpointSettings)
	if addr.IsValid() {
		fixed = func(eps map[string]*network.EndpointSettings) {
			if ep := eps[s.network]; ep != nil {
				ep.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: addr}
			}
		}
	}
	c := s.runWith(ctx, name, image, []string{alias, name}, env, port, readyz(adminPort), nil, fixed, files...)
	s.services[service] = append(s.services[service], &replica{name: name, service: service, index: i, adminPort: port, c: c})
}

func (s *stack) run(ctx context.Context, name, image string, aliases []string, env map[string]string, port string, waitFor wait.Strategy, cmd []string, files ...testcontainers.ContainerFile) *testcontainers.DockerContainer {
	return s.runWith(ctx, name, image, aliases, env, port, waitFor, cmd, nil, files...)
}

func (s *stack) runWith(ctx context.Context, name, image string, aliases []string, env map[string]string, port string, waitFor wait.Strategy, cmd []string, endpoint func(map[string]*network.EndpointSettings), files ...testcontainers.ContainerFile) *testcontainers.DockerContainer {
	s.t.Helper()
	req := testcontainers.ContainerRequest{
		Image:          image,
		ImagePlatform:  "", // the engine's own: never a reason to pull
		Env:            env,
		Cmd:            cmd,
		ExposedPorts:   []string{port},
		Networks:       []string{s.network},
		NetworkAliases: map[string][]string{s.network: aliases},
		Files:          files,
		WaitingFor:     waitFor,
		HostConfigModifier: func(hc *container.HostConfig) {
			// Published on loopback only: the load goes to this machine's
			// own addresses and nowhere else.
			hc.PortBindings = network.PortMap{network.MustParsePort(port): {{HostIP: netip.MustParseAddr("127.0.0.1")}}}
			// A process that exits on its own is started again, as the
			// kubelet restarts a Deployment's container; a `docker kill` or
			// `docker stop` of the test is never undone by the engine.
			hc.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyOnFailure}
			if slices.Contains(aliases, "cases") {
				hc.Tmpfs = evidenceTmpfs
			}
		},
		EndpointSettingsModifier: endpoint,
	}
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	testcontainers.CleanupContainer(s.t, c)
	if err != nil {
		s.t.Fatalf("starting %s (%s): %v%s", name, image, err, tailLogs(c))
	}
	return c.(*testcontainers.DockerContainer)
}

// evidenceTmpfs are the cases replicas' evidence directories, writable
// by the image's user as the chart's emptyDirs are. Each replica has its
// own: the e2e walk uploads no exhibit (tools/devstack's
// TestEvidenceThroughAnIngress does), and a deployment of more than one
// replica names a bucket (docs/operations.md, "Evidence storage").
var evidenceTmpfs = map[string]string{
	"/var/lib/pcourt/evidence":   "uid=65532,gid=65532,mode=0700",
	"/var/spool/pcourt-evidence": "uid=65532,gid=65532,mode=0700",
}

func readyz(adminPort int) wait.Strategy {
	return wait.ForHTTP("/readyz").WithPort(fmt.Sprintf("%d/tcp", adminPort)).
		WithStartupTimeout(startTimeout).WithPollInterval(200 * time.Millisecond)
}

// endpoint is http://127.0.0.1:<published port> of a container's port.
func (s *stack) endpoint(ctx context.Context, c *testcontainers.DockerContainer, port string) string {
	s.t.Helper()
	p, err := c.MappedPort(ctx, port)
	require.NoError(s.t, err)
	return fmt.Sprintf("http://127.0.0.1:%d", p.Num())
}

// all lists every replica of every service, the edge last.
func (s *stack) all() []*replica {
	var out []*replica
	for _, svc := range statelessServices {
		out = append(out, s.services[svc.name]...)
	}
	return append(out, s.services["compat-edge"]...)
}

// redisClient is a client of the stack's Redis at its current published
// port (which changes when the container restarts).
func (s *stack) redisClient() *redis.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rdb == nil {
		ep, err := s.redis.PortEndpoint(context.Background(), "6379/tcp", "")
		require.NoError(s.t, err)
		s.rdb = redis.NewClient(&redis.Options{Addr: ep})
		s.t.Cleanup(func() { _ = s.rdb.Close() })
	}
	return s.rdb
}

// receiverLines returns the receiver's standard output: one JSON line per
// verified event.
func (s *stack) receiverLines(ctx context.Context) []string {
	s.t.Helper()
	rc, err := s.receiver.Logs(ctx)
	require.NoError(s.t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(s.t, err)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "{") {
			out = append(out, line)
		}
	}
	return out
}

func tailLogs(c testcontainers.Container) string {
	if c == nil {
		return ""
	}
	rc, err := c.Logs(context.Background())
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return "\nlast log lines:\n" + strings.Join(lines, "\n")
}

// signingKeyFiles makes one Ed25519 signing key per environment, created
// three days ago so it is active now (keys activate 48 h after the date in
// their id): the <kid>.seed files, by path, that both webhooks replicas
// mount.
func signingKeyFiles(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, env := range []signature.Environment{signature.Sandbox, signature.Live} {
		seed := make([]byte, ed25519.SeedSize)
		_, err := rand.Read(seed)
		require.NoError(t, err)
		pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
		kid, err := signature.NewKeyID(env, time.Now().Add(-72*time.Hour), pub)
		require.NoError(t, err)
		out["/etc/pcourt/webhook-keys/"+kid+".seed"] = hex.EncodeToString(seed)
	}
	return out
}

// awardKeyFiles makes one award signing key: the <kid>.seed file, by path,
// that both cases replicas mount (kid as award.KeyID names it, the seed in
// hex, as docs/operations.md makes one).
func awardKeyFiles(t *testing.T) map[string]string {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	_, err := rand.Read(seed)
	require.NoError(t, err)
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	return map[string]string{"/etc/pcourt/award-keys/" + award.KeyID(pub, time.Now()) + ".seed": hex.EncodeToString(seed) + "\n"}
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
