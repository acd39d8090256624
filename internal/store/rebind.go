package store

import (
	"context"
	"database/sql/driver"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The store writes its SQL once, with SQLite's "?" placeholders. PostgreSQL numbers them
// ($1, $2, …), so the PostgreSQL connections of database/sql go through rebindConn, which
// rewrites each query string once and caches the result: the call sites stay the same on both
// backends. (Written by hand: pgx binds only $N, and sqlx's Rebind would bring a second query
// layer for one function.)

// rebindConnector hands out pgx's database/sql connections wrapped in rebindConn.
type rebindConnector struct {
	driver.Connector
}

// Connect implements driver.Connector.
func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rebindConn{conn.(*stdlib.Conn)}, nil
}

// rebindConn is pgx's database/sql connection with the placeholders of every query rebound;
// everything else (transactions, session reset, value conversion) is pgx's.
type rebindConn struct {
	*stdlib.Conn
}

// Prepare implements driver.Conn.
func (c *rebindConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebind(query))
}

// PrepareContext implements driver.ConnPrepareContext.
func (c *rebindConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(query))
}

// ExecContext implements driver.ExecerContext.
func (c *rebindConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(query), args)
}

// QueryContext implements driver.QueryerContext.
func (c *rebindConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(query), args)
}

// pgxConn is the native pgx connection under a database/sql one (sql.Conn.Raw hands over the
// rebindConn), for what only pgx offers: COPY.
func pgxConn(driverConn any) *pgx.Conn {
	if c, ok := driverConn.(*rebindConn); ok {
		return c.Conn.Conn()
	}
	return nil
}

// rebound caches rebind's results. Some query strings are built (a list of n placeholders,
// an import's batch number), so the cache starts over past reboundMax entries rather than grow
// without end in a long-running serve.
var rebound struct {
	sync.Mutex
	m map[string]string
}

const reboundMax = 4096

// rebind turns the "?" placeholders of query into $1, $2, …, leaving alone those inside
// string literals, quoted identifiers and comments.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	rebound.Lock()
	q, ok := rebound.m[query]
	rebound.Unlock()
	if ok {
		return q
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(query) && query[j] != c {
				j++
			}
			b.WriteString(query[i:min(j+1, len(query))])
			i = j
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			j := strings.Index(query[i+2:], "*/")
			end := len(query)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(query[i:end])
			i = end - 1
		case c == '?':
			// ?NNN (SQLite's numbered form) keeps its number; a bare ? takes the next one.
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(query[i+1 : j])
				i = j - 1
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
		default:
			b.WriteByte(c)
		}
	}
	q = b.String()
	rebound.Lock()
	if rebound.m == nil || len(rebound.m) >= reboundMax {
		rebound.m = make(map[string]string, 64)
	}
	rebound.m[query] = q
	rebound.Unlock()
	return q
}
