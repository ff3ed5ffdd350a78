package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/recovery"
	"github.com/pcourt/pcourt/services/webhooks/internal/selfservice"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// The service's problem codes; docs/problems.md lists them.
var (
	InvalidEndpoint      = problem.Code{Name: "invalid_endpoint", Status: http.StatusBadRequest, Title: "Invalid webhook endpoint"}
	EndpointURLForbidden = problem.Code{Name: "endpoint_url_forbidden", Status: http.StatusUnprocessableEntity, Title: "Endpoint URL not allowed"}
	EndpointNotFound     = problem.Code{Name: "endpoint_not_found", Status: http.StatusNotFound, Title: "Webhook endpoint not found"}
	EndpointLimit        = problem.Code{Name: "endpoint_limit_reached", Status: http.StatusConflict, Title: "Webhook endpoint limit reached"}
	EndpointBusy         = problem.Code{Name: "endpoint_busy", Status: http.StatusServiceUnavailable, Title: "Webhook endpoint busy"}
	EndpointDisabled     = problem.Code{Name: "endpoint_disabled", Status: http.StatusConflict, Title: "Webhook endpoint disabled"}
	DeliveryNotFound     = problem.Code{Name: "delivery_not_found", Status: http.StatusNotFound, Title: "Delivery not found"}
	InvalidQuery         = problem.Code{Name: "invalid_query", Status: http.StatusBadRequest, Title: "Invalid query parameter"}
	NoPartner            = problem.Code{Name: "partner_required", Status: http.StatusForbidden, Title: "Partner credential required"}
	InvalidRecovery      = problem.Code{Name: "invalid_recovery_window", Status: http.StatusBadRequest, Title: "Invalid recovery window"}
	RecoveryNotFound     = problem.Code{Name: "recovery_not_found", Status: http.StatusNotFound, Title: "Recovery not found"}
	RecoveryInProgress   = problem.Code{Name: "recovery_in_progress", Status: http.StatusConflict, Title: "Recovery already running"}
	InvalidTestEvent     = problem.Code{Name: "invalid_test_event", Status: http.StatusBadRequest, Title: "Invalid test event"}
)

// Codes returns the service's problem codes, the rows of owner webhooks in
// docs/problems.md.
func Codes() []problem.Code {
	return []problem.Code{
		InvalidEndpoint, EndpointURLForbidden, EndpointNotFound, EndpointLimit,
		EndpointBusy, EndpointDisabled, DeliveryNotFound, InvalidQuery, NoPartner,
		InvalidRecovery, RecoveryNotFound, RecoveryInProgress, InvalidTestEvent,
	}
}

// disabledRemedy ends the detail of endpoint_disabled for each use case
// that refuses a disabled endpoint.
var disabledRemedy = map[selfservice.Op]string{
	selfservice.OpReplay:    "replaying to it",
	selfservice.OpTestEvent: "sending it a test event",
	selfservice.OpRecover:   `recovering to it, or send "enable": true`,
}

// Problem maps the service's errors to problems; it is the server's
// problem.Mapper.
func Problem(err error) *problem.Error {
	var invalid *endpoints.ValidationError
	var running *store.InProgressError
	var disabled *selfservice.DisabledError
	var unknownType *selfservice.UnknownEventTypeError
	switch {
	case errors.As(err, &invalid):
		return problem.New(InvalidEndpoint, invalid.Error()).Wrap(err)
	case errors.Is(err, endpoints.ErrURLForbidden):
		// The detail names the address as the dialer reads the host, so a
		// partner who wrote 0x7f000001 learns it is 127.0.0.1.
		return problem.Newf(EndpointURLForbidden, "The endpoint URL names an address deliveries may not reach (loopback, private, link-local, metadata or reserved); a live endpoint never reaches one, whatever a development deployment allows: %s.",
			problem.Clip(strings.TrimPrefix(err.Error(), endpoints.ErrURLForbidden.Error()+": "))).Wrap(err)
	case errors.Is(err, endpoints.ErrNotFound):
		return problem.New(EndpointNotFound, "No webhook endpoint with this id exists for this credential's partner and environment.").Wrap(err)
	case errors.Is(err, endpoints.ErrTooMany):
		return problem.Newf(EndpointLimit, "A partner may register at most %d endpoints per environment; delete one first.", endpoints.MaxPerPartner).Wrap(err)
	case errors.Is(err, endpoints.ErrConflict):
		return problem.New(EndpointBusy, "The endpoint changed concurrently too often; retry.").WithHeader("Retry-After", "1").Wrap(err)
	case errors.Is(err, recovery.ErrInvalidWindow):
		return problem.New(InvalidRecovery, err.Error()+".").Wrap(err)
	case errors.As(err, &running):
		return problem.Newf(RecoveryInProgress, "Recovery %s of this endpoint is still running; follow it, or start another when it ends.", running.ID).Wrap(err)
	case errors.Is(err, store.ErrRecoveryNotFound):
		return problem.New(RecoveryNotFound, "No recovery with this id exists for this endpoint, partner and environment.").Wrap(err)
	case errors.Is(err, store.ErrDeliveryNotFound):
		return problem.New(DeliveryNotFound, "No delivery with this id exists for this credential's partner and environment.").Wrap(err)
	case errors.As(err, &disabled):
		return problem.Newf(EndpointDisabled, "Endpoint %s is %s; enable it before %s.", disabled.EndpointID, disabled.Status, disabledRemedy[disabled.Op]).Wrap(err)
	case errors.As(err, &unknownType):
		return problem.Newf(InvalidTestEvent, "type %q is not a case event type; the case-event-v2 schema lists them.", problem.Clip(unknownType.Type)).Wrap(err)
	}
	return nil
}
