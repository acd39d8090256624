package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/store"
)

// TestPostgresUnreachableSaysWhere: a PostgreSQL address nobody answers at gives a plain
// sentence naming the server, and never the password of the address. No server needed.
func TestPostgresUnreachableSaysWhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Port 1 on the loopback: nothing listens there, the connection is refused at once.
	for _, dsn := range []string{
		"postgres://ann:s3cret-pw@127.0.0.1:1/campaign?connect_timeout=5",
		"postgresql://ann@127.0.0.1:1/campaign?password=s3cret-pw&connect_timeout=5",
	} {
		_, err := store.Open(ctx, dsn, store.Options{})
		if err == nil {
			t.Fatalf("open %s: no error", dsn)
		}
		msg := err.Error()
		if !strings.Contains(msg, "cannot reach PostgreSQL at 127.0.0.1:1") || strings.Contains(msg, "s3cret") {
			t.Errorf("open %s: %q", dsn, msg)
		}
		if name := store.DisplayName(dsn); strings.Contains(name, "s3cret") || !strings.Contains(name, "127.0.0.1:1/campaign") {
			t.Errorf("DisplayName(%s) = %q", dsn, name)
		}
	}
	if _, err := store.Open(ctx, "postgres://ann:s3cret-pw@127.0.0.1:bad/x", store.Options{}); err == nil ||
		strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a malformed address: %v", err)
	}
}
