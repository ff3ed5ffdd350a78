package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// devRedis is the stack's Redis: a real redis-server when one is installed.
type devRedis struct {
	kind string
	addr string
	stop func()
}

func startRedis(ctx context.Context, cfg config, stdout io.Writer) (*devRedis, error) {
	addr := "127.0.0.1:" + strconv.Itoa(cfg.RedisPort)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return startEmbeddedRedis(addr, stdout)
	}
	dir := filepath.Join(cfg.Dir, "redis")
	// The append-only file keeps drafts, cases and the outbox across restarts
	// of the stack, as production Redis keeps them across restarts of pods.
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(cfg.RedisPort), "--bind", "127.0.0.1",
		"--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
		"--logfile", filepath.Join(cfg.Dir, "logs", "redis.log"))
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
		return nil, fmt.Errorf("redis-server on %s: %w (see %s)", addr, err, filepath.Join(cfg.Dir, "logs", "redis.log"))
	}
	return &devRedis{kind: "redis-server " + bin, addr: addr, stop: stop}, nil
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
	return &devRedis{kind: "EMBEDDED miniredis (not redis-server)", addr: addr, stop: m.Close}, nil
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
