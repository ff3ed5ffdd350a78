package store

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/reshard"
)

// Reshard moves the drafts stored under from shards to to shards
// (libs/reshard; docs/redis.md, "Resharding"). The service must not run:
// Reshard refuses while an outbox stream holds an entry.
//
// A draft is its hash draft:<id> (the primary key) and the binding of its
// fee, fee-payment:<id>, both under the draft's tag; there are no
// shard-wide keys besides the outbox. A fee's index (pc:filings:fee:{id})
// has its own tag and stays.
func Reshard(ctx context.Context, rdb redis.UniversalClient, from, to int, opts reshard.Options) (reshard.Report, error) {
	return reshard.Run(ctx, rdb, Layout(), from, to, opts)
}

// Layout is the key layout of drafts for libs/reshard.
func Layout() reshard.Layout {
	return reshard.Layout{Service: "filings", Entity: draftOfKey}
}

func draftOfKey(rest string) (string, bool, bool) {
	if id, ok := strings.CutPrefix(rest, "draft:"); ok && id != "" {
		return id, true, true
	}
	if id, ok := strings.CutPrefix(rest, "fee-payment:"); ok && id != "" {
		return id, false, true
	}
	return "", false, false
}
