package vlm

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"syscall"
)

// Unreachable says why the endpoint of a failed request cannot be reached at all — the
// connection is refused, the host name does not resolve, the host or network is unreachable,
// TLS fails, or no answer came in time (after every retry, or within the turn's time) — or
// "" for any other error. These say the endpoint is down, wrong or stalled, so further
// requests are likely to fail the same way; an HTTP status or a bad answer does not. A
// timeout counts: an endpoint that never answers (or trickles its answer, a slowloris) would
// otherwise hold every turn for all its retries.
func Unreachable(err error) string {
	var e *Error
	if errors.As(err, &e) && (e.Kind == KindConnection || e.Kind == KindTimeout) {
		return e.unreachable
	}
	return ""
}

// unreachableTimeout is Unreachable's reason for a request that got no answer in time.
const unreachableTimeout = "no answer in time"

// unreachableReason classifies a transport error for Unreachable.
func unreachableReason(err error) string {
	var dns *net.DNSError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "host name not found"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	case errors.Is(err, http.ErrSchemeMismatch):
		return "TLS failed: the server speaks plain HTTP"
	case errors.As(err, &verify), errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid):
		return "TLS failed: certificate not accepted"
	case errors.As(err, &record):
		return "TLS failed"
	}
	return ""
}
