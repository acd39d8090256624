package vlm

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
)

// Unreachable says why the endpoint of a failed request cannot be reached or used at all,
// or returns "" when err says nothing of the kind. The reasons are: the connection is
// refused, the host name does not resolve, the host or network is unreachable, TLS fails,
// no answer came in time (after every retry, or within the turn's time), or the server
// refuses the key (401, 403) or has no such URL or model (404, 405), as an HTTP status or
// as the code of an error in a 200 body. These say the endpoint is down, wrong or stalled,
// so further requests are likely to fail the same way. Another HTTP status (400 for one
// turn's too long context, 429, 5xx), a redirect (each turn says it) or a bad answer does
// not. A
// timeout counts: an endpoint that never answers (or trickles its answer, a slowloris)
// would otherwise hold every turn for all its retries. The reason of an HTTP error carries
// the server's words (which model it does not know), so that the one line that stops a run
// says what every turn would have said.
func Unreachable(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return ""
	}
	switch e.Kind {
	case KindConnection, KindTimeout:
		return e.unreachable
	case KindHTTP:
		why := wrongEndpoint(e.Status)
		if why == "" {
			return ""
		}
		s := fmt.Sprintf("HTTP %d %s: %s", e.Status, http.StatusText(e.Status), why)
		if e.Body != "" {
			s += "; the server says: " + e.Body
		}
		return s
	case KindAPI:
		// The same errors sent in a 200 body, by their code (vLLM's 404 "The model does
		// not exist", OpenAI's invalid_api_key and model_not_found).
		status, _ := strconv.Atoi(e.APICode)
		switch e.APICode {
		case "invalid_api_key":
			status = http.StatusUnauthorized
		case "model_not_found":
			status = http.StatusNotFound
		}
		if why := wrongEndpoint(status); why != "" {
			return fmt.Sprintf("%s; the server says: %s", why, e.APIMessage)
		}
	}
	return ""
}

// wrongEndpoint says what an HTTP status that every request would get means, or "".
func wrongEndpoint(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "the API key is missing or refused (--api-key-env)"
	case http.StatusForbidden:
		return "the API key may not use this endpoint or model"
	case http.StatusNotFound:
		return "no such URL or model (the API is usually under /v1; check --endpoint and --model)"
	case http.StatusMethodNotAllowed:
		return "the URL takes no chat completion (check --endpoint)"
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
