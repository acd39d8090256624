package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// suggestedGrants cuts the SQL out of a message's "(GRANT …; GRANT …, as …)" or "(GRANT …);".
func suggestedGrants(t *testing.T, msg string) string {
	t.Helper()
	i := strings.Index(msg, "GRANT ")
	if i < 0 {
		t.Fatalf("no GRANT suggested: %s", msg)
	}
	rest := msg[i:]
	for _, end := range []string{", as the campaign's writing role)", "); nothing was changed"} {
		if j := strings.Index(rest, end); j >= 0 {
			return rest[:j]
		}
	}
	t.Fatalf("cannot find the end of the suggested SQL: %s", msg)
	return ""
}

// paste runs sql as psql would run a pasted line: the simple protocol, several statements.
func paste(t *testing.T, dsn, sql string) {
	t.Helper()
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql).ReadAll(); err != nil {
		t.Fatalf("paste %q: %v", sql, err)
	}
}

// TestPostgresGrantSuggestionsAreQuoted (#38 item 5): the GRANT statements the store suggests
// name the schema and the role as the server does, quoted, so that pasting them grants what
// they say and nothing else: a schema named like an injection drops no table, and "Pilot"
// does not grant the other campaign pilot.
func TestPostgresGrantSuggestionsAreQuoted(t *testing.T) {
	dsn := storetest.RequirePostgres(t)
	ctx := context.Background()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var b [4]byte
	rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	victim := "m3eval_victim_" + suffix
	hostile := "x TO ro; DROP TABLE " + victim + ".victim; --" + suffix
	pilotUpper, pilotLower := "Pilot"+suffix, strings.ToLower("Pilot"+suffix)
	for _, s := range []string{victim, hostile, pilotUpper, pilotLower} {
		q := pgx.Identifier{s}.Sanitize()
		if _, err := admin.Exec(`CREATE SCHEMA ` + q); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { admin.Exec(`DROP SCHEMA ` + q + ` CASCADE`) })
	}
	if _, err := admin.Exec(`CREATE TABLE ` + victim + `.victim (x int)`); err != nil {
		t.Fatal(err)
	}
	// A role whose name needs quoting too.
	role := "Ro " + suffix
	if _, err := admin.Exec(`CREATE ROLE ` + pgx.Identifier{role}.Sanitize() + ` LOGIN`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(`DROP OWNED BY ` + pgx.Identifier{role}.Sanitize())
		admin.Exec(`DROP ROLE ` + pgx.Identifier{role}.Sanitize())
	})
	at := func(schema, user string) string {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", pgx.Identifier{schema}.Sanitize())
		// pgx reads a query's "+" as a plus, not a space.
		u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
		if user != "" {
			u.User = url.User(user)
		}
		return u.String()
	}
	for _, schema := range []string{hostile, pilotLower, pilotUpper} {
		storetest.Demo(t, at(schema, "")).Close()
	}
	for _, schema := range []string{hostile, pilotUpper} {
		paste(t, dsn, `GRANT USAGE ON SCHEMA `+pgx.Identifier{schema}.Sanitize()+` TO `+pgx.Identifier{role}.Sanitize())
		_, err := store.Open(ctx, at(schema, role), store.Options{ReadOnly: true})
		if err == nil || !strings.Contains(err.Error(), "in schema "+schema+": grant it") {
			t.Fatalf("schema %q: a reader without SELECT: %v", schema, err)
		}
		paste(t, dsn, suggestedGrants(t, err.Error()))
		r, err := store.Open(ctx, at(schema, role), store.Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("schema %q: a reader after pasting the suggestion: %v", schema, err)
		}
		r.Close()
		_, err = store.Open(ctx, at(schema, role), store.Options{})
		if err == nil || !strings.Contains(err.Error(), "tables in schema "+schema+" (no INSERT") {
			t.Fatalf("schema %q: a writer without INSERT: %v", schema, err)
		}
		paste(t, dsn, suggestedGrants(t, err.Error()))
		w, err := store.Open(ctx, at(schema, role), store.Options{})
		if err != nil {
			t.Fatalf("schema %q: a writer after pasting the suggestion: %v", schema, err)
		}
		w.Close()
	}
	var n int
	if err := admin.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename = 'victim'`, victim).Scan(&n); err != nil || n != 1 {
		t.Errorf("the victim table is gone (%d, %v): a pasted suggestion ran the schema's name", n, err)
	}
	var granted bool
	if err := admin.QueryRow(`SELECT has_table_privilege($1, format('%I.turns', $2::text), 'SELECT')`, role, pilotLower).Scan(&granted); err != nil || granted {
		t.Errorf("the role may read the other campaign %s (%v, %v)", pilotLower, granted, err)
	}
}
