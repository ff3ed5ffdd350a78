// Package selfservice is what a partner does with its webhooks through the
// API: register and change endpoints, read and replay deliveries, start
// and follow a bulk recovery, send a test event, read an endpoint's
// health. Each use case is one method that loads what it needs from the
// store, decides with the pure packages (endpoints, delivery, recovery)
// and stores the result; the HTTP adapter (httpapi) only decodes requests,
// calls one method and writes the views.
//
// Every method takes the partner's scope (tenant, environment, partner)
// from the caller's credential: a resource of another scope is not found,
// never refused, so ids of other partners reveal nothing.
//
// Refusals are errors the adapter maps to problems once (httpapi.Problem):
// the sentinels and typed errors of endpoints, store and recovery, and
// DisabledError and UnknownEventTypeError here.
package selfservice

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// Deps are what the use cases need.
type Deps struct {
	Endpoints  *store.Endpoints
	Deliveries *store.Deliveries
	Recoveries *store.Recoveries
	URLRules   endpoints.URLRules
	// Health is the senders' disable policy, which EndpointHealth applies
	// to say when a failing endpoint will be disabled; zero is
	// delivery.DefaultHealthPolicy.
	Health delivery.HealthPolicy
	// EventTypes are the types a test event may take (the case-event-v2
	// schema's); the first is the default.
	EventTypes []string
	Logger     *slog.Logger
	Now        func() time.Time // nil: time.Now
}

// Service runs the use cases.
type Service struct {
	Deps
}

// New returns the use cases over d.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Health == (delivery.HealthPolicy{}) {
		d.Health = delivery.DefaultHealthPolicy()
	}
	return &Service{d}
}

// Op names a use case that refuses a disabled endpoint.
type Op string

// The use cases that send to an endpoint, and so want it enabled.
const (
	OpReplay    Op = "replay"
	OpRecover   Op = "recover"
	OpTestEvent Op = "test_event"
)

// DisabledError is an endpoint that is not enabled, refused by Op.
type DisabledError struct {
	EndpointID string
	Status     endpoints.Status
	Op         Op
}

func (e *DisabledError) Error() string {
	return fmt.Sprintf("%s: endpoint %s is %s", e.Op, e.EndpointID, e.Status)
}

// requireEnabled refuses ep for op unless it is enabled.
func requireEnabled(ep endpoints.Endpoint, op Op) error {
	if ep.Status != endpoints.Enabled {
		return &DisabledError{EndpointID: ep.ID, Status: ep.Status, Op: op}
	}
	return nil
}

func newID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
