package lifecycle_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/lifecycle"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func waitForStop(stopped chan<- string, name string) lifecycle.Component {
	return lifecycle.Component{Name: name, Run: func(ctx context.Context) error {
		<-ctx.Done()
		stopped <- name
		return nil
	}}
}

func TestFailureStopsTheOthers(t *testing.T) {
	stopped := make(chan string, 2)
	boom := errors.New("boom")
	err := lifecycle.Run(context.Background(), quiet,
		waitForStop(stopped, "http"),
		waitForStop(stopped, "relay"),
		lifecycle.Component{Name: "consumer", Run: func(context.Context) error { return boom }},
	)
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "consumer")
	require.ElementsMatch(t, []string{"http", "relay"}, []string{<-stopped, <-stopped})
}

func TestCancelStopsAllCleanly(t *testing.T) {
	stopped := make(chan string, 2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lifecycle.Run(ctx, quiet, waitForStop(stopped, "http"), waitForStop(stopped, "relay")) }()
	cancel()
	require.NoError(t, <-done)
	require.Len(t, stopped, 2)
}

// Shutdown is in order: a component is told to stop only once the one
// before it has returned, so the relay still runs while HTTP drains.
func TestShutdownRunsInTheOrderGiven(t *testing.T) {
	var mu sync.Mutex
	var events []string
	record := func(e string) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	component := func(name string) lifecycle.Component {
		return lifecycle.Component{Name: name, Run: func(ctx context.Context) error {
			<-ctx.Done()
			record(name + " told to stop")
			record(name + " stopped")
			return nil
		}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- lifecycle.Run(ctx, quiet, component("http"), component("consumer"), component("relay"))
	}()
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, []string{
		"http told to stop", "http stopped",
		"consumer told to stop", "consumer stopped",
		"relay told to stop", "relay stopped",
	}, events)
}
