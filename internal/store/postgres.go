package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/m3bench/m3eval/internal/dataset"
)

//go:embed migrations/postgres/*.sql
var pgMigrationFS embed.FS

// openPostgres opens (and creates or migrates the schema of) the PostgreSQL database that dsn
// names. A campaign is the tables of the connection's current schema (search_path), so one
// database can hold several.
func openPostgres(ctx context.Context, dsn string, opts Options) (*Store, error) {
	where := redactDSN(dsn)
	params := map[string]string{"application_name": "m3eval"}
	if opts.Application != "" {
		params["application_name"] = opts.Application
	}
	if opts.ReadOnly {
		// The read-only commands never write: the server refuses it, whatever a bug asks.
		params["default_transaction_read_only"] = "on"
	}
	// Durable (annotate, adjudicate, serve): a commit returns once the server has it on disk.
	// Otherwise (import, judge) a server crash may lose the last commits, as synchronous=NORMAL
	// allows on SQLite; nothing is ever half written.
	if opts.Durable {
		params["synchronous_commit"] = "on"
	} else {
		params["synchronous_commit"] = "off"
	}
	// Reads see one snapshot per transaction, as SQLite's deferred transactions do.
	db, cfg, err := pgPool(dsn, params, map[string]string{"default_transaction_isolation": "repeatable read"})
	if err != nil {
		return nil, err
	}
	wdb, _, err := pgPool(dsn, params, nil)
	if err != nil {
		db.Close()
		return nil, err
	}
	// A server counts connections (max_connections, 100 by default) for all the hosts of a
	// campaign together: one process's reads and writes share bounded pools. Options.Writers
	// is not applied: it keeps SQLite's writers from polling its lock side by side, while
	// PostgreSQL queues the waiters of its locks itself, and annotators' saves run side by side
	// (beginSave).
	db.SetMaxOpenConns(pgMaxReaders)
	wdb.SetMaxOpenConns(pgMaxWriters)
	s := newStore(db, wdb, where, opts)
	s.d.pg = true
	fail := func(err error) (*Store, error) {
		s.Close()
		return nil, err
	}
	var current sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&current); err != nil {
		return fail(connectError(cfg, dsn, err))
	}
	if !current.Valid {
		return fail(fmt.Errorf("open %s: no schema of search_path exists in that database, or the role may not use it: create it first (CREATE SCHEMA name) or grant it (GRANT USAGE ON SCHEMA name TO role), or leave search_path out to use public", where))
	}
	schema := current.String
	h := fnv.New64a()
	h.Write([]byte("m3eval campaign " + schema))
	s.d.lockKey = int64(h.Sum64())
	h.Write([]byte(" waiting"))
	s.d.waitKey = int64(h.Sum64())
	st, err := s.checkSchemaPG(ctx)
	if err != nil {
		return fail(fmt.Errorf("open %s: %w", where, err))
	}
	if opts.ReadOnly && st.version == 0 {
		// A reader never creates a campaign.
		return fail(fmt.Errorf("open %s: %w: no m3eval campaign there (schema %s); import turns first (m3eval import FILE --db …)", where, ErrNotDatabase, schema))
	}
	if st.pending {
		if opts.ReadOnly {
			// The reader's queries need today's schema: a writable open upgrades it first.
			if err := upgrade(ctx, dsn, where); err != nil {
				return fail(err)
			}
		} else if err := s.migrate(ctx); err != nil {
			return fail(fmt.Errorf("open %s: %w", where, err))
		}
		s.createdSchema = st.version == 0
	}
	if !opts.ReadOnly {
		// A writer is refused at open when the role may not write, as an unwritable SQLite
		// file is (canWrite): otherwise an annotator's screen would open and then retry a
		// save the server refuses every time.
		if err := s.checkWritablePG(ctx, schema); err != nil {
			return fail(fmt.Errorf("open %s: %w", where, err))
		}
	}
	return s, nil
}

// ErrPermission marks a PostgreSQL role's missing privilege. Asking again does not help: the
// role must be granted it, or another role used.
var ErrPermission = errors.New("permission denied")

// pgInsufficientPrivilege is the SQLSTATE of a missing privilege.
const pgInsufficientPrivilege = "42501"

// IsPermanent tells whether err is one that retrying cannot clear: a missing privilege.
func IsPermanent(err error) bool {
	return errors.Is(err, ErrPermission) || pgCode(err) == pgInsufficientPrivilege
}

// writeTables are the annotation tables, which the annotator's and serve's saves write
// (and import, with labels): a role that may not insert into and update them is a reader,
// refused by every command that opens for writing. (A role granted finer privileges, say
// judge_scores alone, is refused too: the docs describe one writing role per campaign.)
var writeTables = []string{"annotators", "annotations", "annotation_values", "changes"}

// checkWritablePG refuses a role that may not write the campaign's tables.
func (s *Store) checkWritablePG(ctx context.Context, schema string) error {
	var role string
	var missing []string
	rows, err := s.db.QueryContext(ctx, `SELECT current_user, t.tablename FROM pg_catalog.pg_tables t
		WHERE t.schemaname = current_schema() AND t.tablename = ANY (?::text[])
		AND NOT (has_table_privilege(format('%I.%I', t.schemaname, t.tablename), 'INSERT')
			AND has_table_privilege(format('%I.%I', t.schemaname, t.tablename), 'UPDATE'))
		ORDER BY t.tablename`, writeTables)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		if err := rows.Scan(&role, &t); err != nil {
			return err
		}
		missing = append(missing, t)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: the role %s may not write the campaign's tables in schema %s (no INSERT or UPDATE on %s): "+
		"use the campaign's writing role for this command, or grant it (GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %s TO %s; GRANT USAGE ON ALL SEQUENCES IN SCHEMA %s TO %s); nothing was changed",
		ErrPermission, role, schema, strings.Join(missing, ", "), pgIdent(schema), pgIdent(role), pgIdent(schema), pgIdent(role))
}

// pgIdent quotes a name for the SQL m3eval suggests that people paste: a schema or role
// named `x TO ro; DROP TABLE t; --` must stay one name, and "Pilot" must not become pilot.
func pgIdent(name string) string {
	return pgx.Identifier{name}.Sanitize()
}

// connectError says why the first query on a PostgreSQL connection failed: the server
// refused the login, has no such database, or could not be reached at all.
func connectError(cfg *pgx.ConnConfig, dsn string, err error) error {
	at := hostPort(cfg)
	switch pgCode(err) {
	case "28P01":
		return fmt.Errorf("PostgreSQL at %s refused the login of user %s: password authentication failed (check the password in the address, $PGPASSWORD or ~/.pgpass)", at, cfg.User)
	case "28000":
		return fmt.Errorf("PostgreSQL at %s refused the login of user %s: %s", at, cfg.User, pgMessage(err))
	case "3D000":
		return fmt.Errorf("PostgreSQL at %s: database %s does not exist (createdb %s, or name another database in the address)", at, cfg.Database, cfg.Database)
	}
	return fmt.Errorf("cannot reach PostgreSQL at %s: %v", at, redactErr(err, dsn))
}

// pgMessage is the server's own message of a PostgreSQL error.
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}

// The connection pools' bounds on PostgreSQL.
const (
	pgMaxReaders = 16
	pgMaxWriters = 8
)

// checkSchemaPG reads the schema version of the campaign in the connection's current schema,
// without writing. Like checkSchemaSQLite it refuses a newer m3eval's campaign or another
// program's tables; it also tells a campaign the role may not read from an empty schema.
func (s *Store) checkSchemaPG(ctx context.Context) (schemaState, error) {
	var st schemaState
	var found bool
	// In the current schema only (the first of search_path, where the tables are created and
	// whose name keys the write lock), not wherever search_path would find the table.
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_name = 'schema_migrations')`).Scan(&found); err != nil {
		return st, err
	}
	known, err := s.migrationNames()
	if err != nil {
		return st, err
	}
	if !found {
		// information_schema shows only the tables the role has some privilege on; the
		// catalog shows them all. A campaign the role may not read is not an empty schema.
		var hidden bool
		var role, schema string
		if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables
			WHERE schemaname = current_schema() AND tablename = 'schema_migrations'), current_user, current_schema()`).Scan(&hidden, &role, &schema); err != nil {
			return st, err
		}
		if hidden {
			return st, fmt.Errorf("%w: the role %s may not read the campaign's tables in schema %s: grant it "+
				"(GRANT USAGE ON SCHEMA %s TO %s; GRANT SELECT ON ALL TABLES IN SCHEMA %s TO %s; GRANT SELECT ON ALL SEQUENCES IN SCHEMA %s TO %s, as the campaign's writing role); nothing was changed",
				ErrPermission, role, schema, pgIdent(schema), pgIdent(role), pgIdent(schema), pgIdent(role), pgIdent(schema), pgIdent(role))
		}
		var tables int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&tables); err != nil {
			return st, err
		}
		if tables > 0 {
			return st, fmt.Errorf("%w: the schema holds tables of another program (no m3eval tables); nothing was changed", ErrNotDatabase)
		}
		st.pending = len(known) > 0
		return st, nil
	}
	applied, err := appliedVersions(ctx, s.db)
	if err != nil {
		return st, err
	}
	return schemaOf(applied, known)
}

// hostPort names the server of a connection configuration in messages.
func hostPort(cfg *pgx.ConnConfig) string {
	if strings.HasPrefix(cfg.Host, "/") {
		return cfg.Host + " (port " + strconv.Itoa(int(cfg.Port)) + ")"
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// redactDSN is dsn without its password, for messages and Path.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "the PostgreSQL address given"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// redactErr is err's text with the DSN's password, should the driver quote it, cut out.
func redactErr(err error, dsn string) string {
	msg := err.Error()
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// pgCode is the SQLSTATE of a PostgreSQL error, "" for any other error.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// PostgreSQL error codes the store tells apart.
const (
	pgUniqueViolation  = "23505"
	pgLockNotAvailable = "55P03" // lock_timeout passed
	pgSerialization    = "40001"
	pgDeadlock         = "40P01"
)

// noNUL refuses a turn with a NUL character in its text, which PostgreSQL's text type cannot
// hold (SQLite can): the user reads which sample and field, not an encoding error.
func noNUL(t *dataset.Turn) error {
	for _, f := range []struct{ name, v string }{{"sample_id", t.SampleID}, {"episode_id", t.EpisodeID},
		{"action_type", t.ActionType}, {"task_type", t.TaskType}, {"user_message", t.UserMessage},
		{"vlm_response", t.VLMResponse}, {"expected_answer", t.ExpectedAnswer}, {"model", t.Model},
		{"meta", string(t.Meta)}, {"images", strings.Join(t.Images, "")}} {
		if strings.Contains(f.v, "\x00") {
			return fmt.Errorf("sample %q: field %s holds a NUL character (\\u0000), which PostgreSQL cannot store in text", t.SampleID, f.name)
		}
	}
	return nil
}

// openPostgresReader opens a read-only pool on dsn, with nothing checked or migrated: shell
// completion reads through it.
func openPostgresReader(dsn string) (*sql.DB, error) {
	db, _, err := pgPool(dsn, map[string]string{"default_transaction_read_only": "on", "application_name": "m3eval"}, nil)
	return db, err
}

// pgPool is a connection pool on dsn whose sessions set the run-time parameters of params and
// then of extra. It connects lazily: the first query says whether the server is there.
func pgPool(dsn string, params, extra map[string]string) (*sql.DB, *pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: the address is not one PostgreSQL understands: %v", redactDSN(dsn), redactErr(err, dsn))
	}
	for k, v := range params {
		cfg.RuntimeParams[k] = v
	}
	for k, v := range extra {
		cfg.RuntimeParams[k] = v
	}
	return sql.OpenDB(rebindConnector{stdlib.GetConnector(*cfg)}), cfg, nil
}

// OtherSessions returns the number of other m3eval connections to s's database: annotators,
// servers and readers. It counts those of any schema, for pg_stat_activity does not tell the
// schema, and returns 0 on SQLite, where a file's readers and writers cannot be counted.
func (s *Store) OtherSessions(ctx context.Context) (int, error) {
	if !s.d.pg {
		return 0, nil
	}
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'm3eval' AND pid <> pg_backend_pid()`).Scan(&n)
	return n, err
}

// CreatedTables tells whether this open created the campaign's tables, in a PostgreSQL
// schema that held none. A copy that fails into it removes them again (DropCreatedTables),
// so that a rerun does not find an empty campaign there and go on silently.
func (s *Store) CreatedTables() bool { return s.createdSchema }

// DropCreatedTables removes the tables this open created (CreatedTables), in one
// transaction. It does nothing when the open created none. The schema held no tables before, so every table
// in it is m3eval's.
func (s *Store) DropCreatedTables(ctx context.Context) error {
	if !s.createdSchema {
		return nil
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, pgIdent(t))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(tables) > 0 {
		if _, err := tx.ExecContext(ctx, `DROP TABLE `+strings.Join(tables, ", ")+` CASCADE`); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.createdSchema = false
	return nil
}
