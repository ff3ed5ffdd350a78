package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/receiver"
	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// devReceiver is a partner's callback endpoint, run in this process so
// that a new user who walks a draft to an opened case sees the signed case
// events arrive: it verifies each delivery against the key set the edge
// publishes, as a partner's receiver does, and prints it.
type devReceiver struct {
	url  string
	srv  *http.Server
	done chan error
}

// startReceiver listens on a free loopback port and prints every verified
// event to out as "webhook  | <event JSON>".
func startReceiver(cfg config, out io.Writer) (*devReceiver, error) {
	base := fmt.Sprintf("http://127.0.0.1:%d", cfg.EdgePort)
	keys, err := receiver.NewJWKSCache(base+"/api/webhooks/keys?environment=sandbox", receiver.JWKSConfig{})
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	handler, err := receiver.NewHandler(keys, func(_ context.Context, d receiver.Delivery) error {
		var line bytes.Buffer
		if err := json.Compact(&line, d.Body); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		_, err := fmt.Fprintf(out, "webhook  | verified %s: %s\n", d.Event.Type, line.Bytes())
		return err
	}, receiver.Config{Environment: signature.Sandbox})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	r := &devReceiver{
		url:  "http://" + ln.Addr().String() + "/pcourt-events",
		srv:  &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second},
		done: make(chan error, 1),
	}
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// register subscribes the receiver, for every event type, as an endpoint of
// the orchestrator's partner, through the edge like any partner.
func (r *devReceiver) register(ctx context.Context, cfg config, orchestratorToken string) error {
	body, err := json.Marshal(map[string]any{"url": r.url, "description": "make run: the development receiver"})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/api/v2/webhooks/endpoints", cfg.EdgePort), bytes.NewReader(body))
	if err != nil {
		return err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+orchestratorToken)
	req.Header.Set("Idempotency-Key", "devstack-"+hex.EncodeToString(key))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("registering the development receiver: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("registering the development receiver: %s: %s", resp.Status, answer)
	}
	return nil
}

func (r *devReceiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
	<-r.done // http.ErrServerClosed: the stack is stopping
}
