package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// limits is the rate limits' setting of one stack.
type limits string

const (
	limitsOn  limits = "on"
	limitsOff limits = "off"
)

// env is the rate limits' part of the stack's environment (the documented
// variables, docs/security-limits.md). On: every limit counts in Redis as
// in production, with budgets no run reaches, so no request is refused.
func (l limits) env() []string {
	var out []string
	for _, name := range []string{"RATE_LIMIT_ADDRESS", "RATE_LIMIT_CREDENTIAL"} {
		if l == limitsOff {
			out = append(out, name+"_RATE=0")
			continue
		}
		out = append(out, name+"_RATE=10000000", name+"_PERIOD=1s", name+"_BURST=10000000")
	}
	return out
}

// productionEnv is what the chart sets on every service and the stack
// would not otherwise have: one request in ten traced (a partner's sampled
// traceparent always), as otel.tracesSampler and tracesSamplerArg deploy,
// and one P per process: the chart gives each service GOMAXPROCS from its
// CPU request rounded up (defaults.resources, 100m: 1). The bare proxies
// run with it too and nginx with one worker, so that every proxy measured
// has the one CPU a pod is scheduled for.
func productionEnv() []string {
	return []string{
		"GOMAXPROCS=1",
		"OTEL_TRACES_SAMPLER=parentbased_traceidratio",
		"OTEL_TRACES_SAMPLER_ARG=0.1",
		"LOG_LEVEL=info",
	}
}

// goEnv builds as the images do (make build): static, paths trimmed, this
// checkout's libs through the workspace.
func goEnv(root string) []string {
	return append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"), "CGO_ENABLED=0",
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
}

// buildTools builds devstack and this command, whose bare-proxy and
// bare-fasthttp modes are the bare proxies' processes, and then has
// devstack build the services into the bin directory both stacks share:
// with no time limit, so that a cold build cache (a fresh machine compiles
// for minutes) is never mistaken for a stack that does not start.
func buildTools(ctx context.Context, cfg config) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(cfg.Dir, "tools")+string(os.PathSeparator),
		"./tools/devstack", "./tools/benchedge")
	cmd.Dir = cfg.Root
	cmd.Env = goEnv(cfg.Root)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building devstack and benchedge: %w\n%s", err, out)
	}
	cmd = exec.CommandContext(ctx, filepath.Join(cfg.Dir, "tools", "devstack"), "-build-only",
		"-dir", filepath.Join(cfg.Dir, "build"), "-bin", cfg.binDir())
	cmd.Dir = cfg.Root
	cmd.Env = goEnv(cfg.Root)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the services: %w\n%s", err, out)
	}
	return nil
}

// stack is a running devstack (make run's processes) with its credential.
type stack struct {
	cmd    *exec.Cmd
	done   chan struct{} // closed when devstack has exited
	err    error         // devstack's exit, once done
	dir    string
	bin    string // the services' binaries (config.binDir)
	port   int    // the edge's; readiness takes the next, filings the one after
	limits limits
	token  string // a platform orchestrator's bearer token
}

// binDir holds the services' binaries, built once for both stacks.
func (c config) binDir() string { return filepath.Join(c.Dir, "bin") }

// stackPort is a stack's first port, its edge's: the limits-on stack's
// at -port, the limits-off stack's 100 above, so the two run side by side
// and their runs take turns (measure.go). Each stack's services take the
// next ten ports, their admin servers 1000 above, Redis +30, Kafka +40.
func (c config) stackPort(l limits) int {
	if l == limitsOff {
		return c.Port + 100
	}
	return c.Port
}

// The reference proxies stand in front of the limits-on stack's owners.
func (c config) readinessPort() int     { return c.Port + 1 }
func (c config) filingsPort() int       { return c.Port + 2 }
func (c config) nginxPort() int         { return c.Port + 20 }
func (c config) bareProxyPort() int     { return c.Port + 21 }
func (c config) bareFastProxyPort() int { return c.Port + 22 }

func (s *stack) readinessPort() int { return s.port + 1 }
func (s *stack) filingsPort() int   { return s.port + 2 }
func (s *stack) adminPort() int     { return s.port + 1000 } // the edge's pprof

// startStack runs devstack with the stack's settings and waits for the
// credentials it writes once every service is ready.
func startStack(ctx context.Context, cfg config, l limits) (*stack, error) {
	dir := filepath.Join(cfg.Dir, "stack-limits-"+string(l))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "devstack.log"))
	if err != nil {
		return nil, err
	}
	port := cfg.stackPort(l)
	cmd := exec.Command(filepath.Join(cfg.Dir, "tools", "devstack"), "-dir", dir, "-bin", cfg.binDir(),
		"-port", strconv.Itoa(port), "-redis-port", strconv.Itoa(port+30), "-kafka-port", strconv.Itoa(port+40))
	cmd.Dir = cfg.Root
	cmd.Env = append(append(goEnv(cfg.Root), productionEnv()...), l.env()...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting devstack: %w", err)
	}
	s := &stack{cmd: cmd, dir: dir, bin: cfg.binDir(), port: port, limits: l, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); log.Close(); close(s.done) }()
	deadline := time.After(3 * time.Minute)
	for {
		token, err := readToken(filepath.Join(dir, "credentials.env"))
		if err == nil {
			s.token = token
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("devstack exited (%v); see %s", s.err, filepath.Join(dir, "devstack.log"))
		case <-deadline:
			s.stop()
			return nil, fmt.Errorf("devstack not ready after 3 minutes; see %s", filepath.Join(dir, "devstack.log"))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// readToken reads the orchestrator's token from devstack's credentials.env.
func readToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "export PCOURT_ORCHESTRATOR_TOKEN="); ok {
			return v, nil
		}
	}
	return "", errors.New("no PCOURT_ORCHESTRATOR_TOKEN yet")
}

// pid is the process id of one of the stack's services: the child of this
// stack's devstack that runs its binary (both stacks run the same ones).
func (s *stack) pid(service string) (int, error) {
	exe := filepath.Join(s.bin, service)
	for _, pid := range children(s.cmd.Process.Pid) {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && target == exe {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("devstack %d runs no %s", s.cmd.Process.Pid, exe)
}

// stop interrupts devstack, which stops its services and waits for them.
func (s *stack) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(40 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// ticks is CPU time in clock ticks, in user space and in the kernel.
type ticks struct{ user, system int64 }

func (t ticks) minus(u ticks) ticks { return ticks{t.user - u.user, t.system - u.system} }
func (t ticks) plus(u ticks) ticks  { return ticks{t.user + u.user, t.system + u.system} }

// cpuTicks is the user and system CPU time of pids (/proc/<pid>/stat
// fields 14 and 15).
func cpuTicks(pids []int) (ticks, error) {
	var total ticks
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return ticks{}, err
		}
		// The command name (field 2) is in parentheses and may hold spaces.
		rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
		f := strings.Fields(rest) // f[0] is field 3
		var v [2]int64
		for i, field := range []int{14, 15} {
			if v[i], err = strconv.ParseInt(f[field-3], 10, 64); err != nil {
				return ticks{}, fmt.Errorf("reading /proc/%d/stat: %w", pid, err)
			}
		}
		total = total.plus(ticks{v[0], v[1]})
	}
	return total, nil
}

// clockTick is the length of one /proc CPU tick: USER_HZ is 100 on Linux.
const clockTick = 10 * time.Millisecond

// children lists the processes whose parent is pid (nginx's workers).
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// machine names the machine: processors, model and load average.
func machine() string {
	model := "unknown processor"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	host, _ := os.Hostname()
	return fmt.Sprintf("machine: %s, %d processors (%s), load average %s, %s", host, runtime.NumCPU(), model,
		strings.Join(strings.Fields(string(load))[:3], " "), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}
