package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/redistest"
)

// devRedis is the stack's Redis: a real redis-server when one is
// installed, or a cluster of three.
type devRedis struct {
	kind  string
	addrs []string
	mode  string // REDIS_MODE for the services
	stop  func()
}

// client is a client of the stack's Redis, whatever its topology.
func (d *devRedis) client() redis.UniversalClient {
	return redis.NewUniversalClient(&redis.UniversalOptions{Addrs: d.addrs, IsClusterMode: d.mode == "cluster"})
}

func startRedis(ctx context.Context, cfg config, stdout io.Writer) (*devRedis, error) {
	addr := "127.0.0.1:" + strconv.Itoa(cfg.RedisPort)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if cfg.RedisCluster {
			return nil, errors.New("a Redis Cluster needs redis-server (apt-get install redis-server)")
		}
		return startEmbeddedRedis(addr, stdout)
	}
	if cfg.RedisCluster {
		return startRedisCluster(ctx, cfg, bin)
	}
	node, err := startRedisNode(ctx, cfg, bin, cfg.RedisPort, filepath.Join(cfg.Dir, "redis"))
	if err != nil {
		return nil, err
	}
	return &devRedis{kind: "redis-server " + bin, addrs: []string{addr}, mode: "standalone", stop: node}, nil
}

// startRedisCluster starts three primaries on the Redis port and the next
// two, each with its own directory and append-only file, and forms one
// cluster of them.
func startRedisCluster(ctx context.Context, cfg config, bin string) (*devRedis, error) {
	var stops []func()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	var addrs []string
	for i := range 3 {
		port := cfg.RedisPort + i
		dir := filepath.Join(cfg.Dir, "redis", strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			stopAll()
			return nil, err
		}
		stop, err := startRedisNode(ctx, cfg, bin, port, dir, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"), "--cluster-node-timeout", "2000")
		if err != nil {
			stopAll()
			return nil, err
		}
		stops = append(stops, stop)
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(port))
	}
	// A cluster kept in the state directory from an earlier run is formed
	// already (FormCluster sees it and waits for it); a fresh one is formed now.
	if err := redistest.FormCluster(ctx, addrs); err != nil {
		stopAll()
		return nil, fmt.Errorf("forming the Redis Cluster: %w", err)
	}
	return &devRedis{kind: "Redis Cluster (3 redis-server primaries, " + bin + ")", addrs: addrs, mode: "cluster", stop: stopAll}, nil
}

// startRedisNode starts one redis-server on port with its data in dir and
// returns how to stop it.
func startRedisNode(ctx context.Context, cfg config, bin string, port int, dir string, extra ...string) (func(), error) {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	logPath := filepath.Join(cfg.Dir, "logs", "redis-"+strconv.Itoa(port)+".log")
	// The append-only file keeps drafts, cases and the outbox across restarts
	// of the stack, as production Redis keeps them across restarts of pods.
	args := append([]string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
		"--logfile", logPath}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM) // redis-server flushes its AOF on SIGTERM
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	if err := pingUntilReady(ctx, addr, done); err != nil {
		stop()
		return nil, fmt.Errorf("redis-server on %s: %w (see %s)", addr, err, logPath)
	}
	return stop, nil
}

// startEmbeddedRedis is the fallback for a machine without redis-server. It
// is enough to click through the demo, not to trust: miniredis lacks parts of
// Redis's Lua and expires keys only when told to.
func startEmbeddedRedis(addr string, stdout io.Writer) (*devRedis, error) {
	fmt.Fprintln(stdout, `
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
!! WARNING: redis-server is not installed. Using an EMBEDDED IN-MEMORY Redis  !!
!! (miniredis): all state is lost on exit, keys never expire, and some Lua    !!
!! behaves differently. Install the real one: apt-get install redis-server    !!
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!`)
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr(addr); err != nil {
		return nil, fmt.Errorf("starting embedded redis on %s: %w", addr, err)
	}
	return &devRedis{kind: "EMBEDDED miniredis (not redis-server)", addrs: []string{addr}, mode: "standalone", stop: m.Close}, nil
}

func pingUntilReady(ctx context.Context, addr string, exited <-chan struct{}) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := rdb.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after 15s: %w", err)
		}
		select {
		case <-exited:
			return fmt.Errorf("exited during start-up: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
