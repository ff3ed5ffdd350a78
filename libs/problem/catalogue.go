package problem

import "net/http"

// The platform-wide part of the catalogue: failures that any service's
// transport can produce. Services declare their domain codes beside their
// handlers; docs/problems.md lists them all.
var (
	MalformedJSON        = Code{"malformed_json", http.StatusBadRequest, "Malformed JSON"}
	UnknownField         = Code{"unknown_field", http.StatusBadRequest, "Unknown field"}
	InvalidFieldType     = Code{"invalid_field_type", http.StatusBadRequest, "Invalid field type"}
	TrailingData         = Code{"trailing_data", http.StatusBadRequest, "Trailing data after the JSON body"}
	DuplicateMember      = Code{"duplicate_member", http.StatusBadRequest, "Duplicate JSON member"}
	EmptyBody            = Code{"empty_body", http.StatusBadRequest, "Empty request body"}
	InvalidRequest       = Code{"invalid_request", http.StatusBadRequest, "Invalid request"}
	BodyTooLarge         = Code{"body_too_large", http.StatusRequestEntityTooLarge, "Request body too large"}
	UnsupportedMediaType = Code{"unsupported_media_type", http.StatusUnsupportedMediaType, "Unsupported media type"}
	HeaderTooLarge       = Code{"header_too_large", http.StatusRequestHeaderFieldsTooLarge, "Request header fields too large"}

	Unauthenticated     = Code{"unauthenticated", http.StatusUnauthorized, "Authentication required"}
	InvalidCredential   = Code{"invalid_credential", http.StatusUnauthorized, "Invalid credential"}
	AmbiguousCredential = Code{"ambiguous_credential", http.StatusBadRequest, "More than one credential"}
	Forbidden           = Code{"forbidden", http.StatusForbidden, "Forbidden"}
	// CrossOrigin is a browser's mutation not sent from the site's own
	// pages: a form post, a ceremony, or a website route's request with an
	// account session.
	CrossOrigin = Code{"cross_origin", http.StatusForbidden, "Not sent from the site's own pages"}

	NotFound         = Code{"not_found", http.StatusNotFound, "Not found"}
	MethodNotAllowed = Code{"method_not_allowed", http.StatusMethodNotAllowed, "Method not allowed"}

	IdempotencyKeyMissing = Code{"idempotency_key_missing", http.StatusBadRequest, "Idempotency-Key required"}
	IdempotencyKeyInvalid = Code{"idempotency_key_invalid", http.StatusBadRequest, "Invalid Idempotency-Key"}
	IdempotencyKeyReused  = Code{"idempotency_key_reused", http.StatusUnprocessableEntity, "Idempotency-Key reused with a different request"}
	IdempotencyInFlight   = Code{"idempotency_in_flight", http.StatusConflict, "Request with this Idempotency-Key in progress"}

	RateLimited = Code{"rate_limited", http.StatusTooManyRequests, "Too many requests"}
	Internal    = Code{"internal", http.StatusInternalServerError, "Internal error"}
	Unavailable = Code{"unavailable", http.StatusServiceUnavailable, "Service unavailable"}
	Overloaded  = Code{"overloaded", http.StatusServiceUnavailable, "Server overloaded"}
	BadGateway  = Code{"bad_gateway", http.StatusBadGateway, "Upstream failed"}
	// NotAvailable is a route of the specification its owner has not built
	// yet; the detail names it, and docs/not-built.md lists every one.
	NotAvailable = Code{"not_available", http.StatusNotImplemented, "Not available"}
)

// Catalogue returns the platform-wide codes above, the rows of owner libs
// in docs/problems.md.
func Catalogue() []Code {
	return []Code{
		MalformedJSON, UnknownField, InvalidFieldType, TrailingData, DuplicateMember, EmptyBody, InvalidRequest,
		BodyTooLarge, UnsupportedMediaType, HeaderTooLarge,
		Unauthenticated, InvalidCredential, AmbiguousCredential, Forbidden, CrossOrigin,
		NotFound, MethodNotAllowed,
		IdempotencyKeyMissing, IdempotencyKeyInvalid, IdempotencyKeyReused, IdempotencyInFlight,
		RateLimited, Internal, NotAvailable, Unavailable, Overloaded, BadGateway,
	}
}
