package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
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
	for db, want := range map[string]string{
		"postgres://ann:pw@db.example:5432/lab?search_path=pilot,public": "lab-pilot",
		"postgresql://db.example/lab":                                    "lab",
		"postgres://db.example":                                          "m3eval",
		"/data/study.db":                                                 "study.db",
		// The docs' spelling of a schema: two campaigns of one database get two names (and
		// so two media directories).
		"postgres://db.example/lab?sslmode=disable&options=-csearch_path%3Dpilot": "lab-pilot",
		"postgres://db.example/lab?options=-c%20search_path%3Dmain":               "lab-main",
		"POSTGRES://db.example/lab":                                               "lab",
	} {
		if got := store.BaseName(db); got != want {
			t.Errorf("BaseName(%s) = %q, want %q", db, got, want)
		}
	}
	if _, err := store.Open(ctx, "postgres://ann:s3cret-pw@127.0.0.1:bad/x", store.Options{}); err == nil ||
		strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a malformed address: %v", err)
	}
}

// TestPostgresSessions: on PostgreSQL a read-only open cannot write (the server refuses it,
// whatever the store would ask), an annotator's (Durable) commits wait for the disk, and
// reads see one snapshot per transaction.
func TestPostgresSessions(t *testing.T) {
	dsn := storetest.PostgresPath(t, storetest.RequirePostgres(t))
	ctx := context.Background()
	w := storetest.Open(t, dsn, store.Options{Durable: true})
	storetest.ImportDemo(t, w)
	for _, c := range []struct {
		name, want string
		read       bool
	}{{"synchronous_commit", "on", false}, {"default_transaction_read_only", "off", false},
		{"transaction_isolation", "repeatable read", true}} {
		if got, err := store.Setting(w, c.name, c.read); err != nil || got != c.want {
			t.Errorf("annotator's store: %s = %q (%v), want %q", c.name, got, err, c.want)
		}
	}
	bulk := storetest.Open(t, dsn, store.Options{})
	if got, err := store.Setting(bulk, "synchronous_commit", false); err != nil || got != "off" {
		t.Errorf("an import's store: synchronous_commit = %q (%v), want off", got, err)
	}
	r := storetest.Open(t, dsn, store.Options{ReadOnly: true})
	if got, err := store.Setting(r, "default_transaction_read_only", false); err != nil || got != "on" {
		t.Errorf("read-only store: default_transaction_read_only = %q (%v)", got, err)
	}
	if st, err := r.Status(ctx); err != nil || st.Turns == 0 {
		t.Fatalf("a read-only store reads: %+v %v", st, err)
	}
	err := r.RememberRubric(ctx, "a-new-version", []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a write through a read-only store: %v", err)
	}
	// A read-only open of a schema with no campaign creates nothing.
	empty := storetest.PostgresPath(t, storetest.RequirePostgres(t))
	if _, err := store.Open(ctx, empty, store.Options{ReadOnly: true}); !errors.Is(err, store.ErrNotDatabase) {
		t.Errorf("read-only open of an empty schema: %v", err)
	}
	if n := rawCount(t, empty, "information_schema.tables WHERE table_schema = current_schema()"); n != 0 {
		t.Errorf("a read-only open created %d tables", n)
	}
	// With search_path "empty, campaign" the campaign is the first schema's (where tables are
	// created and whose name keys the write lock), not the one search_path finds tables in.
	eu, _ := url.Parse(empty)
	du, _ := url.Parse(dsn)
	q0 := eu.Query()
	q0.Set("search_path", eu.Query().Get("search_path")+","+du.Query().Get("search_path"))
	eu.RawQuery = q0.Encode()
	if st, err := storetest.Open(t, eu.String(), store.Options{}).Status(ctx); err != nil || st.Turns != 0 {
		t.Errorf("a campaign of the second schema of search_path was taken for the first's: %+v %v", st, err)
	}
	// A search_path naming no schema there is said so, not taken for an unreachable server.
	u, _ := url.Parse(storetest.RequirePostgres(t))
	q := u.Query()
	q.Set("search_path", "m3eval_no_such_schema")
	u.RawQuery = q.Encode()
	if _, err := store.Open(ctx, u.String(), store.Options{}); err == nil || !strings.Contains(err.Error(), "CREATE SCHEMA") {
		t.Errorf("open with a missing schema: %v", err)
	}
}

// pgRole creates a login role on the test server of dsn (no password: the temporary server
// trusts its socket), dropped when the test ends, and returns it with path's address as it.
func pgRole(t *testing.T, dsn, path string) (role, rolePath string, admin *sql.DB) {
	t.Helper()
	admin, err := sql.Open("pgx", path)
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	rand.Read(b[:])
	role = "m3eval_read_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(`CREATE ROLE ` + role + ` LOGIN`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(`DROP OWNED BY ` + role)
		admin.Exec(`DROP ROLE ` + role)
		admin.Close()
	})
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return role, u.String(), admin
}

// TestPostgresRoleWithoutPrivileges: a role that may not read a campaign's tables is told so
// (not "no campaign there, import turns first"), and a role that may read but not write is
// refused at open by every writing command, with what to grant, rather than failing at its
// first save.
func TestPostgresRoleWithoutPrivileges(t *testing.T) {
	dsn := storetest.RequirePostgres(t)
	path := storetest.PostgresPath(t, dsn)
	storetest.Demo(t, path).Close()
	role, rolePath, admin := pgRole(t, dsn, path)
	schema, _ := url.Parse(path)
	sch := schema.Query().Get("search_path")
	if _, err := admin.Exec(`GRANT USAGE ON SCHEMA ` + sch + ` TO ` + role); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err := store.Open(ctx, rolePath, store.Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "the role "+role+" may not read the campaign's tables in schema "+sch) ||
		strings.Contains(err.Error(), "import turns first") {
		t.Fatalf("a reader without SELECT: %v", err)
	}
	if !strings.Contains(err.Error(), "GRANT SELECT ON ALL TABLES IN SCHEMA \""+sch+"\" TO \""+role+"\"") {
		t.Errorf("the message does not say what to grant: %v", err)
	}
	if _, err := admin.Exec(`GRANT SELECT ON ALL TABLES IN SCHEMA ` + sch + ` TO ` + role); err != nil {
		t.Fatal(err)
	}
	r, err := store.Open(ctx, rolePath, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("a reader with SELECT: %v", err)
	}
	r.Close()
	for _, opts := range []store.Options{{}, {Durable: true}} {
		_, err = store.Open(ctx, rolePath, opts)
		if err == nil || !errors.Is(err, store.ErrPermission) || !store.IsPermanent(err) ||
			!strings.Contains(err.Error(), "the role "+role+" may not write the campaign's tables in schema "+sch) {
			t.Fatalf("a writer (%+v) as a read-only role: %v", opts, err)
		}
	}
	if _, err := admin.Exec(`GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ` + sch + ` TO ` + role); err != nil {
		t.Fatal(err)
	}
	w, err := store.Open(ctx, rolePath, store.Options{Durable: true})
	if err != nil {
		t.Fatalf("a writer with the privileges: %v", err)
	}
	w.Close()
}

// TestPostgresLoginRefusedSaysWhy: a server that answers but refuses the login (a role it
// does not know) or has no such database says so, not "cannot reach PostgreSQL".
func TestPostgresLoginRefusedSaysWhy(t *testing.T) {
	dsn := storetest.RequirePostgres(t)
	ctx := context.Background()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	nodb := *u
	nodb.Path = "/m3eval_no_such_db"
	_, err = store.Open(ctx, nodb.String(), store.Options{})
	if err == nil || !strings.Contains(err.Error(), "database m3eval_no_such_db does not exist") || strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("a missing database: %v", err)
	}
	norole := *u
	norole.User = url.UserPassword("m3eval_no_such_role", "s3cret-pw")
	_, err = store.Open(ctx, norole.String(), store.Options{})
	if err == nil || !strings.Contains(err.Error(), "refused the login of user m3eval_no_such_role") ||
		strings.Contains(err.Error(), "cannot reach") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("an unknown role: %v", err)
	}
}
