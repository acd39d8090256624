package vlm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A 200 whose body is an HTML page, then a good answer: one retry, the answer returned.
func TestNonJSONOKIsRetried(t *testing.T) {
	srv, n := script(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1></body></html>")
			return
		}
		ok(w, "fine")
	})
	text, err := newClient(t, srv.URL, nil).Chat(context.Background(), Tag{"e", 1}, []Message{{Role: RoleUser, Text: "hi"}})
	if err != nil || text != "fine" || n.Load() != 2 {
		t.Fatalf("Chat = %q, %v after %d requests", text, err, n.Load())
	}
}

const (
	secretUser = "alice-user-4711"
	secretPass = "pa55-w0rd-0815"
	secretKey  = "sk-QUERY-SECRET-9999"
	secretBear = "sk-BEARER-SECRET-1234"
)

func assertNoSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range []string{secretUser, secretPass, secretKey, secretBear} {
		if strings.Contains(s, sec) {
			t.Errorf("%s holds the secret %q: %s", what, sec, s)
		}
	}
}

// The endpoint's query keeps its place after /chat/completions; user info, api_key values
// and the bearer key reach neither the request log nor an error, even when the server
// echoes them in its error page.
func TestSecretsNeverLoggedAndQueryKept(t *testing.T) {
	var gotPath, gotQuery, gotAuth string
	srv, _ := script(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		gotPath, gotQuery, gotAuth = r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization")
		// A careless proxy echoing the request.
		http.Error(w, "upstream failed for "+r.URL.String()+" auth "+r.Header.Get("Authorization"), http.StatusBadGateway)
	})
	host := strings.TrimPrefix(srv.URL, "http://")
	endpoint := "http://" + secretUser + ":" + secretPass + "@" + host + "/v1?api-version=2024-06-01&api_key=" + secretKey
	var log bytes.Buffer
	c, err := New(Options{Endpoint: endpoint, Model: "m", APIKey: secretBear, MaxRetries: 1, Backoff: time.Millisecond, MaxBackoff: time.Millisecond, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), Tag{"e", 1}, []Message{{Role: RoleUser, Text: "hi"}})
	if err == nil {
		t.Fatal("want an error")
	}
	if gotPath != "/v1/chat/completions" || gotQuery != "api-version=2024-06-01&api_key="+secretKey || gotAuth != "Bearer "+secretBear {
		t.Errorf("server saw path %q query %q auth %q", gotPath, gotQuery, gotAuth)
	}
	assertNoSecret(t, "the error", err.Error())
	assertNoSecret(t, "the request log", log.String())
	assertNoSecret(t, "URL()", c.URL())
	if !strings.Contains(log.String(), `/v1/chat/completions?api-version=2024-06-01\u0026api_key=REDACTED`) &&
		!strings.Contains(log.String(), `/v1/chat/completions?api-version=2024-06-01&api_key=REDACTED`) {
		t.Errorf("the log does not show the redacted URL: %s", log.String())
	}

	// A connection error quotes the URL in Go's own error text.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	log.Reset()
	c, _ = New(Options{Endpoint: "http://" + secretUser + ":" + secretPass + "@" + addr + "/v1?api_key=" + secretKey, Model: "m", APIKey: secretBear, Log: &log})
	_, err = c.Chat(context.Background(), Tag{"e", 1}, []Message{{Role: RoleUser, Text: "hi"}})
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindConnection {
		t.Fatalf("err = %v", err)
	}
	assertNoSecret(t, "the connection error", err.Error())
	assertNoSecret(t, "the request log", log.String())

	// A bad endpoint is refused without quoting its secrets.
	for _, bad := range []string{"ftp://" + secretUser + ":" + secretPass + "@h/v1?api_key=" + secretKey, "http://" + secretUser + ":" + secretPass + "@/v1?api_key=" + secretKey} {
		_, err := New(Options{Endpoint: bad, Model: "m"})
		if err == nil {
			t.Fatalf("%s accepted", bad)
		}
		assertNoSecret(t, "the endpoint error", err.Error())
	}
}
