package reshard

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/redisclient"
)

// Mover is a store's Reshard.
type Mover func(ctx context.Context, rdb redis.UniversalClient, from, to int, opts Options) (Report, error)

// Command runs the "reshard" subcommand of a service's binary:
//
//	<service> reshard -from 16 -to 64 [-dry-run] [-limit N]
//
// It reads the service's Redis settings from the same variables as the
// service (REDIS_ADDRS, REDIS_MODE, …), so it runs as a one-off with the
// service's image and environment (a Kubernetes Job), and moves the data
// with move. It prints a line per entity and a summary to stdout.
func Command(ctx context.Context, service string, args []string, getenv func(string) string, stdout io.Writer, move Mover) error {
	fs := flag.NewFlagSet(service+" reshard", flag.ContinueOnError)
	fs.SetOutput(stdout)
	from := fs.Int("from", 0, "the shard count the data is written with (the running "+service+"'s)")
	to := fs.Int("to", 0, "the shard count to move the data to")
	dry := fs.Bool("dry-run", false, "print what would move and change nothing")
	limit := fs.Int("limit", 0, "stop after moving this many entities (0: all); run again to continue")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *from == 0 || *to == 0 {
		return errors.New("-from and -to are required")
	}
	if *from == *to {
		return fmt.Errorf("-from and -to are both %d: nothing to do", *from)
	}
	r := envconf.New(getenv)
	cfg := redisclient.FromEnv(r)
	if err := errors.Join(r.Err(), cfg.Validate()); err != nil {
		return err
	}
	rdb := redisclient.New(cfg)
	defer rdb.Close()
	// A run stopped at its -limit has said so and succeeded: the next run
	// continues.
	_, err := move(ctx, rdb, *from, *to, Options{DryRun: *dry, Limit: *limit, Log: stdout})
	return err
}
