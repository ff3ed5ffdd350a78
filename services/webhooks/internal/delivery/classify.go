package delivery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"syscall"
	"time"
)

// Kind is what an attempt's outcome means for its delivery.
type Kind string

// The kinds of outcome.
const (
	Success Kind = "success" // a 2xx: the delivery is done
	Failure Kind = "failure" // anything else: retry on the schedule
	Gone    Kind = "gone"    // a 410: the partner retired the endpoint; disable it
)

// Class names why an attempt failed, for the attempt record and metrics.
type Class string

// The failure classes. A response has a class from its status; a transport
// error from what went wrong.
const (
	ClassNone      Class = ""
	ClassHTTP4xx   Class = "http_4xx"
	ClassHTTP5xx   Class = "http_5xx"
	ClassRedirect  Class = "redirect" // a 3xx, never followed
	ClassGone      Class = "gone"     // a 410
	ClassThrottled Class = "throttled"
	ClassTimeout   Class = "timeout"
	ClassDNS       Class = "dns"
	ClassTLS       Class = "tls"
	ClassRefused   Class = "refused"
	ClassForbidden Class = "forbidden_address" // the dial guard refused the resolved address
	ClassNetwork   Class = "network"           // any other transport failure
)

// Outcome is what the sender saw: a response status and its Retry-After, or
// a transport error.
type Outcome struct {
	Status     int
	RetryAfter string
	Err        error
}

// Result is a classified outcome.
type Result struct {
	Kind       Kind
	Class      Class
	Status     int
	RetryAfter time.Duration // the wait the receiver asked for, 0 if none
}

// ForbiddenAddress is implemented by errors of the dial guard, so that a
// refused address is its own class without this package knowing the guard.
type ForbiddenAddress interface {
	error
	AddressForbidden() bool
}

// The two statuses the schedule treats on their own (RFC 9110, RFC 6585).
// Named here, not taken from net/http: this package is a pure domain.
const (
	statusGone            = 410
	statusTooManyRequests = 429
)

// Classify turns an outcome into a result, reading Retry-After against now.
func Classify(o Outcome, now time.Time) Result {
	if o.Err != nil {
		return Result{Kind: Failure, Class: classifyError(o.Err)}
	}
	r := Result{Status: o.Status}
	switch {
	case o.Status >= 200 && o.Status <= 299:
		r.Kind = Success
		return r
	case o.Status == statusGone:
		r.Kind, r.Class = Gone, ClassGone
		return r
	case o.Status >= 300 && o.Status <= 399:
		r.Class = ClassRedirect
	case o.Status == statusTooManyRequests:
		r.Class = ClassThrottled
	case o.Status >= 500:
		r.Class = ClassHTTP5xx
	default:
		r.Class = ClassHTTP4xx
	}
	r.Kind = Failure
	r.RetryAfter = ParseRetryAfter(o.RetryAfter, now)
	return r
}

// ErrRedirect is what a sender's client returns when a response redirects;
// redirects are never followed.
var ErrRedirect = errors.New("redirect not followed")

func classifyError(err error) Class {
	var forbidden ForbiddenAddress
	var dnsErr *net.DNSError
	var netErr net.Error
	var recordErr tls.RecordHeaderError
	var verifyErr *tls.CertificateVerificationError
	var alertErr tls.AlertError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	switch {
	case errors.As(err, &forbidden) && forbidden.AddressForbidden():
		return ClassForbidden
	case errors.Is(err, ErrRedirect):
		return ClassRedirect
	case errors.As(err, &dnsErr):
		return ClassDNS
	case errors.As(err, &recordErr), errors.As(err, &verifyErr), errors.As(err, &alertErr),
		errors.As(err, &unknownAuthority), errors.As(err, &hostnameErr), errors.As(err, &invalidCert):
		return ClassTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ClassTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	}
	return ClassNetwork
}
