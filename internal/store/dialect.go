package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// dialect is what differs between the two databases the store runs on: SQLite (the embedded
// default) and PostgreSQL (a DSN postgres://… given as --db). Most of the store's SQL is
// written once, in the spelling both accept (boolean columns compared with true/false,
// ON CONFLICT, RETURNING, count(*) FILTER); the placeholders "?" are rebound to "$1…" by the
// PostgreSQL connection itself (rebind.go), and this type holds the few spellings that differ.
type dialect struct {
	pg bool
	// lockKey is the campaign-wide advisory lock (PostgreSQL): every write transaction takes
	// it, which gives the store SQLite's one-writer-at-a-time semantics that the import
	// batches, their fences and the undo batches are built on.
	lockKey int64
	// waitKey is held (shared) by short writers while they wait for lockKey, so that a bulk
	// writer can end its chunk early for them (shortWriterWaiting), as waiters.go does on SQLite.
	waitKey int64
	// exclusiveSaves makes saves take the campaign's lock alone too (a benchmark's baseline).
	exclusiveSaves bool
}

// isPostgres tells whether a --db value names a PostgreSQL database rather than a file. The
// scheme is matched without regard to case, as URL schemes are (RFC 3986).
func isPostgres(path string) bool {
	return hasPrefixFold(path, "postgres://") || hasPrefixFold(path, "postgresql://")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// pgDSN is a PostgreSQL address with its scheme in lower case, which pgx needs.
func pgDSN(path string) string {
	if i := strings.Index(path, "://"); i > 0 {
		return strings.ToLower(path[:i]) + path[i:]
	}
	return path
}

// urlScheme matches the start of an address of any scheme (two letters or more, so that a
// Windows drive letter is a file's): scheme://… or the PostgreSQL scheme without its slashes.
var urlScheme = regexp.MustCompile(`^(?i)(?:([a-z][a-z0-9+.-]+)://|(postgres(?:ql)?):)`)

// CheckAddress refuses a --db value that is neither an SQLite file name nor a PostgreSQL
// address. Such are an address of another scheme (mysql://…) and postgres: without its //,
// which would otherwise be opened, or created, as a file named after it, password included. The
// message quotes the scheme only, never the rest.
func CheckAddress(db string) error {
	if isPostgres(db) {
		return nil
	}
	m := urlScheme.FindStringSubmatch(db)
	switch {
	case m == nil:
		return nil
	case m[2] != "":
		return fmt.Errorf("%q… is no PostgreSQL address: one starts %s:// (two slashes), as in postgres://user@host/database; nothing was opened", m[2]+":", strings.ToLower(m[2]))
	default:
		return fmt.Errorf("%q… is an address m3eval cannot open: give an SQLite file or a PostgreSQL address (postgres://… or postgresql://…); nothing was opened", m[1]+"://")
	}
}

// IsPostgres tells whether a --db value names a PostgreSQL database rather than an SQLite
// file. Such a value starts postgres:// or postgresql://.
func IsPostgres(db string) bool { return isPostgres(db) }

// DisplayName returns how messages and reports name the database db, a --db value. A file is
// named as given, a PostgreSQL address without its password.
func DisplayName(db string) string {
	if isPostgres(db) {
		return redactDSN(db)
	}
	if CheckAddress(db) != nil {
		// Not opened, but maybe an address with a password: its scheme alone.
		return urlScheme.FindString(db) + "…"
	}
	return db
}

// BaseName returns a short name for the database db (a --db value), for files named after
// it. That is a file's name without its directory, or a PostgreSQL database's name followed
// by the schema when the address names one (search_path).
func BaseName(db string) string {
	if !isPostgres(db) {
		return filepath.Base(db)
	}
	name := "m3eval"
	if u, err := url.Parse(pgDSN(db)); err == nil {
		if p := strings.Trim(u.Path, "/"); p != "" {
			name = p
		}
		if sp := searchPath(u.Query()); sp != "" {
			name += "-" + strings.TrimSpace(strings.SplitN(sp, ",", 2)[0])
		}
	}
	return strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(name)
}

// searchPath is the search_path an address sets: its search_path parameter, or the
// -c search_path=… (or -csearch_path=…) of its options parameter, the last one winning as
// the server applies them.
func searchPath(q url.Values) string {
	if sp := q.Get("search_path"); sp != "" {
		return sp
	}
	sp := ""
	fields := strings.Fields(q.Get("options"))
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case f == "-c" && i+1 < len(fields):
			i++
			f = fields[i]
		case strings.HasPrefix(f, "-c"):
			f = f[2:]
		case strings.HasPrefix(f, "--"):
			f = f[2:]
		default:
			continue
		}
		if k, v, ok := strings.Cut(f, "="); ok && strings.ReplaceAll(k, "-", "_") == "search_path" {
			sp = v
		}
	}
	return strings.Trim(sp, `"'`)
}

// inKeys is the condition that col is one of the keys bound (keysArg) to its one placeholder.
// On PostgreSQL a text array, which the planner turns into index lookups whatever the table's
// size when the statement was prepared (a JSON array there planned a scan of the episodes,
// which a 1,000,000-turn import then paid once per chunk).
func (d dialect) inKeys(col string) string {
	if d.pg {
		return col + ` = ANY (?::text[])`
	}
	return col + ` IN (SELECT value FROM json_each(?))`
}

// keysArg is the argument inKeys takes: keys as a JSON array on SQLite, an array
// on PostgreSQL (pgx sends it as text[]).
func (d dialect) keysArg(keys []string) (any, error) {
	if d.pg {
		return keys, nil
	}
	b, err := json.Marshal(keys)
	return string(b), err
}

// jsonGroupObject aggregates key/value text pairs into one JSON object text.
func (d dialect) jsonGroupObject(k, v string) string {
	if d.pg {
		return `COALESCE(json_object_agg(` + k + `, ` + v + `)::text, '{}')`
	}
	return `json_group_object(` + k + `, ` + v + `)`
}

// metaText is the text of a top-level key of a turn's meta object (NULL when absent or null),
// as SQLite's json_extract gives it: a string as is, a number as written, true and false as 1
// and 0 (PostgreSQL's json, not jsonb, keeps numbers as written).
func (d dialect) metaText(col, key string) string {
	if d.pg {
		k := `'` + strings.ReplaceAll(key, `'`, `''`) + `'`
		return `(CASE json_typeof(` + col + `::json -> ` + k + `) WHEN 'boolean' THEN CASE WHEN ` + col + `::json ->> ` + k +
			` = 'true' THEN '1' ELSE '0' END ELSE ` + col + `::json ->> ` + k + ` END)`
	}
	return `CAST(json_extract(` + col + `, '$."` + key + `"') AS TEXT)`
}

// metaInt is a top-level key of a turn's meta object when it is a whole number, else -1.
func (d dialect) metaInt(col, key string) string {
	if d.pg {
		return `CASE WHEN json_typeof(` + col + `::json -> '` + key + `') = 'number' AND (` + col + `::json ->> '` + key + `') ~ '^-?[0-9]+$'
			THEN (` + col + `::json ->> '` + key + `')::bigint ELSE -1 END`
	}
	return `CASE WHEN json_type(` + col + `, '$.` + key + `') = 'integer' THEN json_extract(` + col + `, '$.` + key + `') ELSE -1 END`
}

// least is the smaller of two values (SQLite's scalar min).
func (d dialect) least(a, b string) string {
	if d.pg {
		return `LEAST(` + a + `, ` + b + `)`
	}
	return `min(` + a + `, ` + b + `)`
}

// tempTable is how a statement names a temporary table of the connection.
func (d dialect) tempTable(name string) string {
	if d.pg {
		return `pg_temp.` + name
	}
	return `temp.` + name
}

// beginRead starts a read transaction on one connection: one snapshot for all its queries,
// without the write lock (the write pool's transactions take it).
func (d dialect) beginRead() string {
	if d.pg {
		return `BEGIN ISOLATION LEVEL REPEATABLE READ`
	}
	return `BEGIN DEFERRED`
}

// lockWrite takes, inside the transaction just begun on q, the write lock: on SQLite the
// BEGIN IMMEDIATE did; on PostgreSQL the campaign's advisory lock, waited for at most wait
// (then a lock_timeout error, which isBusy recognizes, and waitLock gives up or tries again).
// PostgreSQL queues the waiters, so a bulk writer's next chunk goes behind those already
// waiting; a short writer also marks itself as waiting (waitKey) for the chunk under way.
func (d dialect) lockWrite(ctx context.Context, q querier, wait int64, class writerClass) error {
	if !d.pg {
		return nil
	}
	// One round trip: each subquery runs before the query around it (PostgreSQL does not pull
	// up a subquery whose output calls a volatile function), so the timeout is set first, then
	// a short writer marks itself waiting, then the lock is taken.
	timeout := strconv.FormatInt(max(wait, 1), 10)
	if class == shortWriter {
		_, err := q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?3) FROM (SELECT pg_advisory_xact_lock_shared(?2)
			FROM (SELECT set_config('lock_timeout', ?1, true)) t) w`, timeout, d.waitKey, d.lockKey)
		return err
	}
	_, err := q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?2) FROM (SELECT set_config('lock_timeout', ?1, true)) t`, timeout, d.lockKey)
	return err
}

// lockSave takes the locks of an annotator's save (beginSave): the campaign's lock shared and
// the annotator's alone, in one round trip as lockWrite does. PostgreSQL queues a shared
// request behind a waiting exclusive one, so a stream of saves cannot starve an import.
func (d dialect) lockSave(ctx context.Context, q querier, wait int64, annotatorID int64) error {
	// Distinct annotators get distinct keys but for a 2^-64 chance, which would only make two
	// annotators' saves take turns.
	annotatorKey := d.lockKey ^ (annotatorID+1)*-7046029254386353131
	_, err := q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?4) FROM (SELECT pg_advisory_xact_lock_shared(?3)
		FROM (SELECT pg_advisory_xact_lock_shared(?2) FROM (SELECT set_config('lock_timeout', ?1, true)) t) w) c`,
		strconv.FormatInt(max(wait, 1), 10), d.waitKey, d.lockKey, annotatorKey)
	return err
}

// shortWriterWaiting tells, on PostgreSQL, whether a short writer waits for the write lock:
// one holds waitKey shared, so an exclusive try fails (and when it succeeds it is let go at
// once, in the same statement).
func (d dialect) shortWriterWaiting(ctx context.Context, q querier) bool {
	var waiting bool
	err := q.QueryRowContext(ctx, `SELECT CASE WHEN pg_try_advisory_lock(?) THEN NOT pg_advisory_unlock(?) ELSE true END`,
		d.waitKey, d.waitKey).Scan(&waiting)
	return err == nil && waiting
}

// beginConn starts a write transaction on a connection of the write pool (an import's chunk,
// a batch's removal) and takes the write lock.
func (s *Store) beginConn(ctx context.Context, conn *sql.Conn) error {
	if !s.d.pg {
		_, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
		return err
	}
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		return err
	}
	if err := s.d.lockWrite(ctx, conn, s.lockWait.Milliseconds(), bulkWriter); err != nil {
		conn.ExecContext(context.Background(), `ROLLBACK`)
		return err
	}
	return nil
}

// savepoint runs f, a statement that may break a constraint, so that the transaction goes on
// after such an error as it does on SQLite (which undoes only the statement); PostgreSQL would
// abort the whole transaction, so there f runs inside a savepoint rolled back on error.
func (s *Store) savepoint(ctx context.Context, q querier, f func() error) error {
	if !s.d.pg {
		return f()
	}
	if _, err := q.ExecContext(ctx, `SAVEPOINT stmt`); err != nil {
		return err
	}
	if err := f(); err != nil {
		if _, rerr := q.ExecContext(ctx, `ROLLBACK TO SAVEPOINT stmt`); rerr != nil {
			return fmt.Errorf("%w (and undoing the statement: %v)", err, rerr)
		}
		return err
	}
	_, err := q.ExecContext(ctx, `RELEASE SAVEPOINT stmt`)
	return err
}

// crossJoin is the join that keeps its left table the outer loop: SQLite's CROSS JOIN … ON
// fixes the order for its planner; PostgreSQL plans joins itself and spells it JOIN.
func (d dialect) crossJoin() string {
	if d.pg {
		return `JOIN`
	}
	return `CROSS JOIN`
}
