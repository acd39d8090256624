package vlm

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestUnreachable: a refused connection, a host name that does not resolve, plain HTTP
// behind an https:// URL, a certificate not trusted, no answer in time, a key refused, no
// such URL or model say the endpoint cannot be reached or used; a 502 (it may pass), a 400
// (one turn's request) and a redirect not followed (each turn says it) do not.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("status") {
		case "401":
			http.Error(w, `{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}`, http.StatusUnauthorized)
			return
		case "404":
			http.Error(w, `{"object":"error","message":"The model `+"`m`"+` does not exist.","code":404}`, http.StatusNotFound)
			return
		case "200-404":
			io.WriteString(w, `{"object":"error","message":"The model `+"`m`"+` does not exist.","type":"NotFoundError","code":404}`)
			return
		case "200-key":
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		case "200-busy":
			io.WriteString(w, `{"error":{"message":"overloaded","code":503}}`)
			return
		case "400":
			http.Error(w, `{"error":{"message":"maximum context length is 4096 tokens"}}`, http.StatusBadRequest)
			return
		case "302":
			http.Redirect(w, r, "/canned", http.StatusFound)
			return
		}
		if strings.Contains(r.URL.RawQuery, "slow") {
			select { // longer than the client waits
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
			return
		}
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	for _, c := range []struct{ endpoint, want string }{
		{"http://" + dead + "/v1", "connection refused"},
		{"http://no-such-host.invalid/v1", "host name not found"},
		{"https://" + strings.TrimPrefix(plain.URL, "http://") + "/v1", "TLS failed: the server speaks plain HTTP"},
		{tlsSrv.URL + "/v1", "TLS failed: certificate not accepted"},
		{plain.URL + "/v1", ""},
		{plain.URL + "/v1?slow=1", "no answer in time"},
		{plain.URL + "/v1?status=401", `HTTP 401 Unauthorized: the API key is missing or refused (--api-key-env); the server says: {"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}`},
		{plain.URL + "/v1?status=404", "HTTP 404 Not Found: no such URL or model (the API is usually under /v1; check --endpoint and --model); the server says: {\"object\":\"error\",\"message\":\"The model `m` does not exist.\",\"code\":404}"},
		{plain.URL + "/v1?status=400", ""},
		{plain.URL + "/v1?status=200-404", "no such URL or model (the API is usually under /v1; check --endpoint and --model); the server says: The model `m` does not exist."},
		{plain.URL + "/v1?status=200-key", "the API key is missing or refused (--api-key-env); the server says: Incorrect API key provided"},
		{plain.URL + "/v1?status=200-busy", ""},
		{plain.URL + "/v1?status=302", ""},
	} {
		timeout := 20 * time.Second // a TLS handshake is slow under -race on a busy machine
		if strings.Contains(c.endpoint, "slow") {
			timeout = 300 * time.Millisecond
		}
		cl, err := New(Options{Endpoint: c.endpoint, Model: "m", MaxRetries: 0, Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Chat(context.Background(), Tag{}, []Message{{Role: RoleUser, Text: "hi"}})
		if err == nil {
			t.Fatalf("%s: no error", c.endpoint)
		}
		if got := Unreachable(err); got != c.want {
			t.Errorf("%s: Unreachable = %q, want %q (%v)", c.endpoint, got, c.want, err)
		}
	}
}
