package store

// This file answers shell completion (m3eval's `__complete`): names and ids that start with
// what the user typed, read from a database that is only ever read, never created, migrated
// or upgraded. A completion that cannot be answered (no such file, an older schema without the
// table) answers nothing rather than fail the user's shell.

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
)

// Completion names what shell completion completes. Only these queries' text ever reaches
// the SQL.
type Completion string

// The completions a Completer answers.
const (
	CompleteAnnotators Completion = "annotators"
	CompleteJudges     Completion = "judges"
	CompleteSampleIDs  Completion = "sample ids"
	CompleteSamples    Completion = "samples"   // named samples (m3eval sample --name)
	CompleteCampaigns  Completion = "campaigns" // samples that were assigned
)

// completionQueries are the queries of the completions: rows at or after ?1 in the column's
// order, at most ?2 of them. Each column has a UNIQUE index, so SQLite seeks to the prefix
// instead of scanning the table.
var completionQueries = map[Completion]string{
	CompleteAnnotators: `SELECT name FROM annotators WHERE name >= ?1 AND repeat_of IS NULL ORDER BY name LIMIT ?2`, // repeat rows stay hidden
	CompleteJudges:     `SELECT name FROM judges WHERE name >= ?1 ORDER BY name LIMIT ?2`,
	CompleteSampleIDs:  `SELECT sample_id FROM turns WHERE sample_id >= ?1 ORDER BY sample_id LIMIT ?2`,
	CompleteSamples:    `SELECT name FROM samples WHERE name >= ?1 ORDER BY name LIMIT ?2`,
	CompleteCampaigns: `SELECT s.name FROM samples s JOIN campaigns c ON c.sample_id = s.id
		WHERE s.name >= ?1 ORDER BY s.name LIMIT ?2`,
}

// Completer reads completions from a database opened read-only.
type Completer struct{ db *sql.DB }

// OpenCompleter opens the database at path for completion. A missing file is ErrNotFound:
// completion never creates a database.
func OpenCompleter(ctx context.Context, path string) (*Completer, error) {
	if err := CheckAddress(path); err != nil {
		return nil, fmt.Errorf("open %s: %w", DisplayName(path), ErrNotFound)
	}
	if isPostgres(path) {
		path = pgDSN(path)
		db, err := openPostgresReader(path)
		if err != nil {
			return nil, err
		}
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s: %w", redactDSN(path), ErrNotFound)
		}
		return &Completer{db: db}, nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, ErrNotFound)
	}
	db, err := sql.Open("sqlite3", dsn(path, Options{ReadOnly: true}, false))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := readable(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &Completer{db: db}, nil
}

// Close closes the database.
func (c *Completer) Close() error { return c.db.Close() }

// Complete lists up to limit values of what that start with prefix, in byte order. That is
// SQLite's BINARY collation, which is Go's string order: the rows that share the prefix come
// first.
func (c *Completer) Complete(ctx context.Context, what Completion, prefix string, limit int) ([]string, error) {
	q, ok := completionQueries[what]
	if !ok {
		return nil, fmt.Errorf("complete %s: %w", what, ErrNotFound)
	}
	rows, err := c.db.QueryContext(ctx, q, prefix, limit)
	if err != nil {
		return nil, fmt.Errorf("complete %s: %w", what, err)
	}
	all, err := scanStrings(rows)
	if err != nil {
		return nil, fmt.Errorf("complete %s: %w", what, err)
	}
	out := all[:0]
	for _, s := range all {
		if !strings.HasPrefix(s, prefix) {
			break
		}
		out = append(out, s)
	}
	return out, nil
}
