package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/m3bench/m3eval/internal/plural"
)

// copyTables is every table the migrations create, parents before the tables that refer to
// them (the order of the migrations that create them), so that each row's references exist
// when it is inserted with the foreign keys enforced. schema_migrations is not copied: both
// ends have their own, and Copy checks that they list the same versions. A migration that
// adds a table must add it here; Copy refuses a database with a table missing from this list
// (TestCopyKnowsEveryTable), so a new table can never be left behind silently.
var copyTables = []string{
	"episodes", "turns", "annotators", "rubrics", "annotations", "annotation_values", "changes",
	"judges", "judge_scores", "import_batches", "judge_rule_sets", "samples", "sample_strata",
	"sample_turns", "campaigns", "assignments", "gold_labels", "final_labels", "final_changes",
	"import_claims", "judge_versions", "judge_turns",
}

// copyNouns name what a row of each of copyTables is, in words (plural.N adds the -s).
var copyNouns = map[string]string{
	"episodes": "episode", "turns": "turn", "annotators": "annotator", "rubrics": "rubric",
	"annotations": "annotation", "annotation_values": "labeled value", "changes": "label change",
	"judges": "judge", "judge_scores": "judge score", "import_batches": "import",
	"judge_rule_sets": "judge rule set", "samples": "sample", "sample_strata": "sample stratum row",
	"sample_turns": "sampled turn", "campaigns": "campaign", "assignments": "assignment",
	"gold_labels": "gold label", "final_labels": "final label", "final_changes": "final label change",
	"import_claims": "import claim", "judge_versions": "judge version", "judge_turns": "judged turn",
}

// refillTables are tables a target may hold rows of and still count as empty: opening a
// database for annotating records the rubric in use, which is no campaign of its own. Their
// rows are replaced by the source's.
var refillTables = map[string]bool{"rubrics": true}

// ErrTargetNotEmpty marks a copy refused because the target already holds a campaign.
var ErrTargetNotEmpty = errors.New("the target already holds a campaign")

// CopyOptions tune Copy.
type CopyOptions struct {
	// Replace lets Copy delete the target's campaign first. The deletion and the copy are one
	// transaction: when the copy fails, the target is left as it was.
	Replace bool
}

// CopiedTable is how many rows of one table a copy wrote.
type CopiedTable struct {
	Name string
	Rows int64
}

// CopyReport says what a copy did.
type CopyReport struct {
	Tables []CopiedTable
	// Replaced is how many rows of the target's earlier campaign were deleted (Replace).
	Replaced int64
}

// Rows is the number of rows copied, all tables together.
func (r CopyReport) Rows() int64 {
	var n int64
	for _, t := range r.Tables {
		n += t.Rows
	}
	return n
}

// Count is the number of rows copied into table name.
func (r CopyReport) Count(name string) int64 {
	for _, t := range r.Tables {
		if t.Name == name {
			return t.Rows
		}
	}
	return 0
}

// copyBatchParams caps the placeholders of one multi-row INSERT: SQLite allows 32,766 per
// statement, PostgreSQL 65,535.
const copyBatchParams = 30000

// copyBatchRows caps the rows of one INSERT, so that a statement stays a few hundred
// kilobytes even for the turns' long texts.
const copyBatchRows = 500

// Copy copies the whole campaign of from into to. Every table is copied row for row with the
// same ids, read in one snapshot of from and written in one transaction on to, so that a
// reader of to sees all of it or nothing, and a failed copy leaves to as it was. Either end may be SQLite
// or PostgreSQL. The export of both is then byte-identical.
//
// A target that already holds a campaign is refused (ErrTargetNotEmpty) unless
// opts.Replace, and so are the same database at both ends and a source with an import in
// progress or interrupted (its unfinished batch would be copied as unfinished, and on the
// target no process would ever finish or remove it).
func Copy(ctx context.Context, from, to *Store, opts CopyOptions) (CopyReport, error) {
	var rep CopyReport
	if same, err := sameDatabase(ctx, from, to); err != nil {
		return rep, fmt.Errorf("copy: %w", err)
	} else if same {
		return rep, fmt.Errorf("copy: %s and %s are the same database", from.Path(), to.Path())
	}
	src, err := from.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rep, fmt.Errorf("copy: read %s: %w", from.Path(), err)
	}
	defer src.Rollback()
	if err := copyCheckSource(ctx, from, src); err != nil {
		return rep, err
	}
	// Read before the target is touched, so that a source role without the privilege is
	// refused first. Read in the snapshot's transaction, a sequence is at least as far as any
	// row the snapshot holds (setIDMarks takes the larger of the two).
	marks, err := idMarks(ctx, from, src)
	if err != nil {
		if IsPermanent(err) {
			return rep, fmt.Errorf("copy: read %s's id sequences: %w (the role needs SELECT on them: GRANT SELECT ON ALL SEQUENCES IN SCHEMA … TO …); nothing was copied", from.Path(), err)
		}
		return rep, fmt.Errorf("copy: read %s's id sequences: %w", from.Path(), err)
	}
	dst, err := to.beginWrite(ctx)
	if err != nil {
		return rep, fmt.Errorf("copy: write %s: %w", to.Path(), err)
	}
	defer dst.Rollback()
	if err := copySameSchema(ctx, from, src, to, dst); err != nil {
		return rep, err
	}
	replaced, err := copyClearTarget(ctx, to, dst, opts.Replace)
	if err != nil {
		return rep, err
	}
	rep.Replaced = replaced
	for _, table := range copyTables {
		n, err := copyTable(ctx, src, to, dst, table)
		if err != nil {
			return rep, fmt.Errorf("copy: table %s: %w", table, err)
		}
		rep.Tables = append(rep.Tables, CopiedTable{table, n})
	}
	if err := setIDMarks(ctx, to, dst, marks); err != nil {
		return rep, fmt.Errorf("copy: set %s's id sequences: %w", to.Path(), err)
	}
	if err := dst.Commit(); err != nil {
		return rep, fmt.Errorf("copy: commit to %s: %w", to.Path(), err)
	}
	return rep, nil
}

// copyCheckSource refuses a source with an import batch open: running, or interrupted and
// not yet removed (the next import into it removes an interrupted one).
func copyCheckSource(ctx context.Context, from *Store, src *sql.Tx) error {
	var id int64
	var source, host, started string
	var pid int64
	switch err := src.QueryRowContext(ctx, `SELECT id, source, host, pid, started_at FROM import_batches ORDER BY id LIMIT 1`).
		Scan(&id, &source, &host, &pid, &started); {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("copy: read %s: %w", from.Path(), err)
	default:
		return fmt.Errorf("copy: %s has an import of %s in progress or interrupted (batch %d, started %s by process %d on %s): wait until it ends; an interrupted one is removed by the next m3eval import into that database; nothing was copied",
			from.Path(), source, id, started, pid, host)
	}
}

// copySameSchema checks that both ends have this m3eval's tables and all its migrations:
// Copy moves rows by column name, and rows of an older or newer schema would not fit.
func copySameSchema(ctx context.Context, from *Store, src *sql.Tx, to *Store, dst *sql.Tx) error {
	for _, end := range []struct {
		s *Store
		q querier
	}{{from, src}, {to, dst}} {
		names, err := tableNames(ctx, end.s, end.q)
		if err != nil {
			return fmt.Errorf("copy: list the tables of %s: %w", end.s.Path(), err)
		}
		for _, n := range names {
			if n != "schema_migrations" && !slices.Contains(copyTables, n) {
				return fmt.Errorf("copy: %s has a table %s that this m3eval does not know how to copy; nothing was copied", end.s.Path(), n)
			}
		}
		for _, n := range copyTables {
			if !slices.Contains(names, n) {
				return fmt.Errorf("copy: %s has no table %s: it is not an m3eval database of this version; nothing was copied", end.s.Path(), n)
			}
		}
	}
	// Each backend numbers its own migrations (PostgreSQL's first one is SQLite's ten at
	// once): both ends must have all of this m3eval's, which makes their tables the same.
	for _, end := range []struct {
		s *Store
		q querier
	}{{from, src}, {to, dst}} {
		got, err := appliedVersions(ctx, end.q)
		if err != nil {
			return fmt.Errorf("copy: read %s's schema version: %w", end.s.Path(), err)
		}
		known, err := end.s.migrationNames()
		if err != nil {
			return err
		}
		var want []int
		for _, m := range known {
			want = append(want, m.version)
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("copy: %s has the migrations %v and this m3eval's are %v: open it with this m3eval first; nothing was copied", end.s.Path(), got, want)
		}
	}
	return nil
}

// copyClearTarget checks that the target holds no campaign, or deletes it when replace (in
// the copy's transaction, children before parents). It returns the rows deleted.
func copyClearTarget(ctx context.Context, to *Store, dst *sql.Tx, replace bool) (int64, error) {
	var held []string
	var total int64
	for _, table := range copyTables {
		var n int64
		if err := dst.QueryRowContext(ctx, `SELECT count(*) FROM `+quoteIdent(table)).Scan(&n); err != nil {
			return 0, fmt.Errorf("copy: read %s: %w", to.Path(), err)
		}
		if n > 0 && !refillTables[table] {
			held = append(held, plural.N(int(n), copyNouns[table]))
		}
		total += n
	}
	if len(held) > 0 && !replace {
		return 0, fmt.Errorf("copy: %w: %s holds %s; nothing was copied (--replace deletes that campaign, in the same transaction as the copy)",
			ErrTargetNotEmpty, to.Path(), strings.Join(held, ", "))
	}
	for i := len(copyTables) - 1; i >= 0; i-- {
		if _, err := dst.ExecContext(ctx, `DELETE FROM `+quoteIdent(copyTables[i])); err != nil {
			return 0, fmt.Errorf("copy: empty %s of %s: %w", copyTables[i], to.Path(), err)
		}
	}
	if len(held) == 0 {
		total = 0 // only the rubric a command recorded: nothing of a campaign was replaced
	}
	return total, nil
}

// copyTable copies one table's rows, by column name, in multi-row INSERTs.
func copyTable(ctx context.Context, src *sql.Tx, to *Store, dst *sql.Tx, table string) (int64, error) {
	// The target's columns and their types: a value is converted where the two backends
	// spell a type differently (SQLite keeps booleans as 0/1 integers).
	trows, err := dst.QueryContext(ctx, `SELECT * FROM `+quoteIdent(table)+` WHERE 1 = 0`)
	if err != nil {
		return 0, err
	}
	ttypes, err := trows.ColumnTypes()
	trows.Close()
	if err != nil {
		return 0, err
	}
	isBool := map[string]bool{}
	for _, ct := range ttypes {
		isBool[ct.Name()] = to.isPG() && strings.EqualFold(ct.DatabaseTypeName(), "BOOL")
	}

	rows, err := src.QueryContext(ctx, `SELECT * FROM `+quoteIdent(table)+` ORDER BY 1`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	if len(cols) != len(ttypes) {
		return 0, fmt.Errorf("the source has the columns %v and the target %d others", cols, len(ttypes))
	}
	for _, c := range cols {
		if _, ok := isBool[c]; !ok {
			return 0, fmt.Errorf("the target has no column %s", c)
		}
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = quoteIdent(c)
	}
	head := `INSERT INTO ` + quoteIdent(table) + ` (` + strings.Join(quoted, ", ") + `) `
	if to.isPG() {
		// The ids are the source's: an identity column GENERATED ALWAYS (import_batches)
		// accepts them only so.
		head += `OVERRIDING SYSTEM VALUE `
	}
	head += `VALUES `
	tuple := `(` + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + `)`
	perStmt := max(1, min(copyBatchRows, copyBatchParams/len(cols)))

	var n int64
	args := make([]any, 0, perStmt*len(cols))
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		k := len(args) / len(cols)
		stmt := head + strings.TrimSuffix(strings.Repeat(tuple+", ", k), ", ")
		if _, err := dst.ExecContext(ctx, stmt, args...); err != nil {
			return err
		}
		n += int64(k)
		args = args[:0]
		return nil
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, v := range vals {
			if to.isPG() {
				if err := pgText(v); err != nil {
					return n, fmt.Errorf("the row with %s = %v: column %s %w", cols[0], vals[0], cols[i], err)
				}
			}
			args = append(args, copyValue(v, isBool[cols[i]]))
		}
		if len(args) >= perStmt*len(cols) {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, flush()
}

// copyValue is a value read from one backend as the other takes it. Both drivers hand over
// int64, float64, string, []byte, bool and nil; only SQLite's 0/1 integers for a PostgreSQL
// boolean column need converting (a bool into SQLite is stored as 0/1 by its driver). A
// []byte is copied: the driver may reuse the buffer for the next row.
func copyValue(v any, toBool bool) any {
	switch x := v.(type) {
	case int64:
		if toBool {
			return x != 0
		}
	case []byte:
		return slices.Clone(x)
	}
	return v
}

// pgText refuses, before PostgreSQL does with a message naming no row, a text value that
// PostgreSQL's text cannot hold and SQLite's can: a NUL byte, or bytes that are not UTF-8.
func pgText(v any) error {
	x, ok := v.(string)
	switch {
	case !ok:
		return nil
	case strings.IndexByte(x, 0) >= 0:
		return errors.New("holds a NUL byte, which PostgreSQL text cannot hold; nothing was copied")
	case !utf8.ValidString(x):
		return errors.New("holds bytes that are not UTF-8, which PostgreSQL text cannot hold; nothing was copied")
	}
	return nil
}

// idMark is the highest id a table's id sequence has handed out, deleted rows included.
type idMark struct {
	table string
	last  int64
}

// idMarks reads the id sequences of from: where ids are never reused (import batches, whose
// numbers old rows keep), the target must go on from the source's highest, not from the
// highest left in the table.
func idMarks(ctx context.Context, from *Store, src *sql.Tx) ([]idMark, error) {
	var out []idMark
	if from.isPG() {
		for _, table := range copyTables {
			var seq sql.NullString
			if err := src.QueryRowContext(ctx, `SELECT pg_get_serial_sequence(?, 'id') FROM information_schema.columns
				WHERE table_schema = current_schema() AND table_name = ? AND column_name = 'id'`, table, table).Scan(&seq); errors.Is(err, sql.ErrNoRows) {
				continue
			} else if err != nil {
				return nil, err
			}
			if !seq.Valid {
				continue
			}
			var last int64
			var called bool
			if err := src.QueryRowContext(ctx, `SELECT last_value, is_called FROM `+seq.String).Scan(&last, &called); err != nil {
				return nil, err
			}
			if called {
				out = append(out, idMark{table, last})
			}
		}
		return out, nil
	}
	// SQLite keeps the mark only for AUTOINCREMENT tables, in sqlite_sequence (which exists
	// once the schema has such a table); other tables go on from their highest id.
	rows, err := src.QueryContext(ctx, `SELECT name, seq FROM sqlite_sequence ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var m idMark
		if err := rows.Scan(&m.table, &m.last); err != nil {
			return nil, err
		}
		if slices.Contains(copyTables, m.table) {
			out = append(out, m)
		}
	}
	return out, rows.Err()
}

// setIDMarks makes the target's id sequences go on after the copied rows and the source's
// marks: PostgreSQL's sequences do not move when rows are inserted with their ids.
func setIDMarks(ctx context.Context, to *Store, dst *sql.Tx, marks []idMark) error {
	mark := map[string]int64{}
	for _, m := range marks {
		mark[m.table] = m.last
	}
	if to.isPG() {
		for _, table := range copyTables {
			var seq sql.NullString
			if err := dst.QueryRowContext(ctx, `SELECT pg_get_serial_sequence(?, 'id') FROM information_schema.columns
				WHERE table_schema = current_schema() AND table_name = ? AND column_name = 'id'`, table, table).Scan(&seq); errors.Is(err, sql.ErrNoRows) {
				continue
			} else if err != nil {
				return err
			}
			if !seq.Valid {
				continue
			}
			var top int64
			if err := dst.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM `+quoteIdent(table)).Scan(&top); err != nil {
				return err
			}
			top = max(top, mark[table])
			if top == 0 {
				_, err := dst.ExecContext(ctx, `SELECT setval(?::regclass, 1, false)`, seq.String)
				if err != nil {
					return err
				}
				continue
			}
			if _, err := dst.ExecContext(ctx, `SELECT setval(?::regclass, ?, true)`, seq.String, top); err != nil {
				return err
			}
		}
		return nil
	}
	// SQLite: only AUTOINCREMENT tables read sqlite_sequence; the others need nothing.
	for _, table := range copyTables {
		var ddl string
		if err := dst.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&ddl); err != nil {
			return err
		}
		if !strings.Contains(strings.ToUpper(ddl), "AUTOINCREMENT") {
			continue
		}
		var top int64
		if err := dst.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM `+quoteIdent(table)).Scan(&top); err != nil {
			return err
		}
		top = max(top, mark[table])
		if _, err := dst.ExecContext(ctx, `DELETE FROM sqlite_sequence WHERE name = ?`, table); err != nil {
			return err
		}
		if top > 0 {
			if _, err := dst.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)`, table, top); err != nil {
				return err
			}
		}
	}
	return nil
}

// tableNames lists the tables of a store's campaign: an SQLite file's, or the current
// schema's on PostgreSQL.
func tableNames(ctx context.Context, s *Store, q querier) ([]string, error) {
	query := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`
	if s.isPG() {
		query = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
	}
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// sameDatabase tells whether two stores are one database: the same file, or the same
// PostgreSQL cluster, database and schema. A copy onto itself with Replace would delete the
// campaign it is about to read.
func sameDatabase(ctx context.Context, a, b *Store) (bool, error) {
	if a.isPG() != b.isPG() {
		return false, nil
	}
	if !a.isPG() {
		fa, err := os.Stat(a.Path())
		if err != nil {
			return false, err
		}
		fb, err := os.Stat(b.Path())
		if err != nil {
			return false, err
		}
		return os.SameFile(fa, fb), nil
	}
	id := func(s *Store) (string, error) {
		var sys int64
		var db, schema string
		err := s.db.QueryRowContext(ctx, `SELECT (SELECT system_identifier FROM pg_control_system()), current_database(), current_schema()`).Scan(&sys, &db, &schema)
		if err == nil {
			return strconv.FormatInt(sys, 10) + "/" + db + "/" + schema, nil
		}
		// pg_control_system may be withheld from ordinary roles (managed servers): the
		// server's address as it answers stands in for the cluster.
		var addr sql.NullString
		var port sql.NullInt64
		err = s.db.QueryRowContext(ctx, `SELECT host(inet_server_addr()), inet_server_port(), current_database(), current_schema()`).Scan(&addr, &port, &db, &schema)
		return addr.String + ":" + strconv.FormatInt(port.Int64, 10) + "/" + db + "/" + schema, err
	}
	ia, err := id(a)
	if err != nil {
		return false, err
	}
	ib, err := id(b)
	if err != nil {
		return false, err
	}
	return ia == ib, nil
}

// quoteIdent quotes a table or column name as both SQLite and PostgreSQL read it.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// isPG tells whether the store is on PostgreSQL.
func (s *Store) isPG() bool { return s.d.pg }
