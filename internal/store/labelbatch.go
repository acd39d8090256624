package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/m3bench/m3eval/internal/dataset"
)

// Labels go in a batch at a time (#44). PutLabel spent about eight statements per label, each
// prepared, bound, stepped and finalized through database/sql and cgo: a look-up of the stored
// label, the annotation's INSERT and one INSERT per rubric field. Preparing alone was a third
// of the import's CPU, and the label import ran 30 times slower than the turn import. PutLabels
// asks once per batch which of its (annotator, turn) pairs have a label already and writes all
// the new ones with two statements (SQLite: rows handed over as one JSON array; PostgreSQL:
// COPY). Everything else (a label stored before, twice in one file, a constraint the batch
// breaks) goes through putLabel as before, so outcomes and errors stay PutLabel's.

// labelStmts are PutLabels' statements, prepared on first use.
type labelStmts struct {
	findLabeled *sql.Stmt
	// annotations and values are multi-row INSERTs by number of rows (SQLite).
	annotations, values map[int]*sql.Stmt
	args, valueArgs     []any
	vals                [][]any
	// annotationIDs are annotation ids taken from the sequence ahead of use (PostgreSQL).
	annotationIDs []int64
	annotationSeq string
}

// closeLabels closes PutLabels' statements.
func (im *Importer) closeLabels() {
	ls := &im.labels
	if ls.findLabeled != nil {
		ls.findLabeled.Close()
	}
	for _, st := range ls.annotations {
		st.Close()
	}
	for _, st := range ls.values {
		st.Close()
	}
}

// labelKey names a label by its annotator and turn, the annotations table's UNIQUE key.
type labelKey struct{ annotator, turn int64 }

// PutLabels stores labels for turns put earlier in this import: ls[i] for turnIDs[i], in
// order, with PutLabel's outcomes and errors. On error, len(outcomes) is the index of the
// label that failed.
func (im *Importer) PutLabels(turnIDs []int64, ls []*dataset.Label) ([]dataset.Outcome, error) {
	if err := im.ensureTx(); err != nil {
		return nil, err
	}
	outcomes, err := im.putLabels(turnIDs, ls)
	if err != nil {
		return outcomes, err
	}
	return outcomes, im.maybeCommit()
}

func (im *Importer) putLabels(turnIDs []int64, ls []*dataset.Label) ([]dataset.Outcome, error) {
	outcomes := make([]dataset.Outcome, 0, len(ls))
	aids := make([]int64, len(ls))
	for i, l := range ls {
		aid, err := im.annotatorID(l.Annotator)
		if err != nil {
			return outcomes, err
		}
		aids[i] = aid
	}
	stored, err := im.labeledPairs(turnIDs)
	if err != nil {
		return outcomes, fmt.Errorf("look up stored labels: %w", err)
	}
	// pending are the indexes of new labels not written yet; a label whose pair is pending
	// or stored waits until they are, and then goes through putLabel, which compares it.
	pending := make([]int, 0, len(ls))
	seen := make(map[labelKey]bool, len(ls))
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		ok, err := im.insertLabels(pending, turnIDs, aids, ls)
		if err != nil {
			return err
		}
		for _, i := range pending {
			o := dataset.Inserted
			if !ok {
				// The batch broke a constraint and was undone: one by one, each label gets its
				// own outcome or its own error.
				if o, err = im.putLabel(turnIDs[i], ls[i]); err != nil {
					return err
				}
			}
			outcomes = append(outcomes, o)
		}
		pending = pending[:0]
		return nil
	}
	for i, l := range ls {
		k := labelKey{aids[i], turnIDs[i]}
		if !stored[k] && !seen[k] && (!im.s.d.pg || !labelHasNUL(l)) {
			seen[k] = true
			pending = append(pending, i)
			continue
		}
		if err := flush(); err != nil {
			return outcomes, err
		}
		o, err := im.putLabel(turnIDs[i], l)
		if err != nil {
			return outcomes, err
		}
		outcomes = append(outcomes, o)
		seen[k] = true
	}
	return outcomes, flush()
}

// labelHasNUL tells a label PostgreSQL cannot store in text; putLabel then reports it.
func labelHasNUL(l *dataset.Label) bool {
	if strings.Contains(l.FlagReason, "\x00") || strings.Contains(l.RubricVersion, "\x00") {
		return true
	}
	for k, v := range l.Values {
		if strings.Contains(k, "\x00") || strings.Contains(v, "\x00") {
			return true
		}
	}
	return false
}

// labeledPairs reads which (annotator, turn) pairs among the turns given have a label
// stored, in any batch, with one query.
func (im *Importer) labeledPairs(turnIDs []int64) (map[labelKey]bool, error) {
	stored := map[labelKey]bool{}
	if im.s.d.pg {
		return stored, im.labeledPairsPostgres(turnIDs, stored)
	}
	st := &im.labels
	if st.findLabeled == nil {
		var err error
		if st.findLabeled, err = im.conn.PrepareContext(im.ctx,
			`SELECT annotator_id, turn_id FROM annotations WHERE turn_id IN (SELECT value FROM json_each(?))`); err != nil {
			return nil, err
		}
	}
	b, err := json.Marshal(turnIDs)
	if err != nil {
		return nil, err
	}
	rows, err := st.findLabeled.QueryContext(im.ctx, string(b))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k labelKey
		if err := rows.Scan(&k.annotator, &k.turn); err != nil {
			return nil, err
		}
		stored[k] = true
	}
	return stored, rows.Err()
}

// labeledPairsPostgres is labeledPairs on PostgreSQL, as an unnamed statement planned at each
// run. A prepared statement is planned once for all after five runs: planned while this
// import's labels were few, the look-up scanned the whole table ever after, and a
// 20,000-label import spent a third of its time there, growing with the square of its size.
// (Setting plan_cache_mode for the connection instead also re-planned every foreign-key check
// of the COPY, row by row: five times slower.)
func (im *Importer) labeledPairsPostgres(turnIDs []int64, stored map[labelKey]bool) error {
	return im.conn.Raw(func(dc any) error {
		c := pgxConn(dc)
		if c == nil {
			return fmt.Errorf("not a PostgreSQL connection")
		}
		rows, err := c.Query(im.ctx, `SELECT annotator_id, turn_id FROM annotations WHERE turn_id = ANY ($1::bigint[])`,
			pgx.QueryExecModeExec, turnIDs)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k labelKey
			if err := rows.Scan(&k.annotator, &k.turn); err != nil {
				return err
			}
			stored[k] = true
		}
		return rows.Err()
	})
}

// annotationColumns are the columns of a label's annotations row, in labelRow's order.
var annotationColumns = []string{"turn_id", "annotator_id", "status", "flagged", "flag_reason", "rubric_version",
	"active_ms", "created_at", "updated_at", "annotated_at", "stale", "import_batch"}

// labelRow is the annotations row of label l, in annotationColumns' order: the one place that
// says how a label is stored, for insertLabel, the multi-row INSERT and PostgreSQL's COPY.
func labelRow(turnID, annotatorID, batch int64, l *dataset.Label) []any {
	at := formatTime(l.AnnotatedAt)
	var annotatedAt any
	if l.Status == dataset.StatusDone {
		annotatedAt = at
	}
	return []any{turnID, annotatorID, string(l.Status), l.Flagged, l.FlagReason, l.RubricVersion,
		secondsToMS(l.ActiveSeconds), at, at, annotatedAt, l.Stale, batch}
}

// insertLabels writes the new labels ls[i] for i in idx, with their values. ok is false when
// the rows broke a constraint (a label another import stored meanwhile, a turn that is gone):
// nothing of them is then written.
func (im *Importer) insertLabels(idx []int, turnIDs, aids []int64, ls []*dataset.Label) (ok bool, err error) {
	var first int64
	if im.s.d.pg {
		first, ok, err = im.copyLabels(idx, turnIDs, aids, ls)
	} else {
		first, ok, err = im.insertLabelsSQLite(idx, turnIDs, aids, ls)
	}
	if !ok || err != nil {
		return ok, err
	}
	if err := im.lowerFence(claimAnnotation, first); err != nil {
		return false, fmt.Errorf("store labels: %w", err)
	}
	return true, nil
}

// valueRows appends the annotation_values rows of label l, stored as annotation id: its
// fields in sorted order, as insertLabel writes them.
func valueRows(rows [][]any, id int64, l *dataset.Label) [][]any {
	for _, f := range slices.Sorted(maps.Keys(l.Values)) {
		rows = append(rows, []any{id, f, l.Values[f]})
	}
	return rows
}

// insertLabelsSQLite writes the rows with two multi-row INSERTs, prepared once for each
// number of rows (a batch has nearly always the same): the per-statement cost of database/sql
// and cgo is paid per batch instead of per label and field. The annotations get consecutive
// ids (one INSERT, nothing else writing in the transaction), so the values' annotation ids
// follow from the last one.
func (im *Importer) insertLabelsSQLite(idx []int, turnIDs, aids []int64, ls []*dataset.Label) (first int64, ok bool, err error) {
	st := &im.labels
	args := st.args[:0]
	for _, i := range idx {
		// The batch is written into the statement: the row's last value is left out.
		args = append(args, labelRow(turnIDs[i], aids[i], im.batch, ls[i])[:len(annotationColumns)-1]...)
	}
	st.args = args
	insert, err := st.rowsStmt(im, &st.annotations, `INSERT INTO annotations (`+strings.Join(annotationColumns, ", ")+`) VALUES `,
		"("+placeholders(len(annotationColumns)-1)+", "+fmt.Sprint(im.batch)+")", len(idx))
	if err != nil {
		return 0, false, err
	}
	res, err := insert.ExecContext(im.ctx, args...)
	if err != nil {
		if isConstraint(err) {
			return 0, false, nil // SQLite undid the statement
		}
		return 0, false, fmt.Errorf("store labels: %w", err)
	}
	last, err := res.LastInsertId()
	if err != nil {
		return 0, false, err
	}
	first = last - int64(len(idx)) + 1
	vals := st.vals[:0]
	for j, i := range idx {
		vals = valueRows(vals, first+int64(j), ls[i])
	}
	st.vals = vals
	if err := im.insertValues(vals); err != nil {
		return 0, false, fmt.Errorf("store label values: %w", err)
	}
	return first, true, nil
}

// insertValues writes annotation_values rows (valueRows), valueRowsMax rows a statement
// (SQLite allows 32,766 parameters), with the statements of rowsStmt.
func (im *Importer) insertValues(vals [][]any) error {
	st := &im.labels
	args := st.valueArgs[:0]
	for _, v := range vals {
		args = append(args, v...)
	}
	st.valueArgs = args
	for start := 0; start < len(vals); start += valueRowsMax {
		n := min(valueRowsMax, len(vals)-start)
		insert, err := st.rowsStmt(im, &st.values, `INSERT INTO annotation_values (annotation_id, field, value) VALUES `, "(?, ?, ?)", n)
		if err != nil {
			return err
		}
		if _, err := insert.ExecContext(im.ctx, args[3*start:3*(start+n)]...); err != nil {
			return err
		}
	}
	return nil
}

// valueRowsMax is how many annotation_values rows one INSERT carries at most.
const valueRowsMax = 2048

// rowsStmt is the INSERT of n rows of the form row, prepared once per n. Only the last few
// sizes are kept: batches are nearly all one size.
func (ls *labelStmts) rowsStmt(im *Importer, cache *map[int]*sql.Stmt, head, row string, n int) (*sql.Stmt, error) {
	if st, ok := (*cache)[n]; ok {
		return st, nil
	}
	if *cache == nil || len(*cache) >= 4 {
		for _, st := range *cache {
			st.Close()
		}
		*cache = map[int]*sql.Stmt{}
	}
	st, err := im.conn.PrepareContext(im.ctx, multiRowInsert(head, row, n))
	if err != nil {
		return nil, err
	}
	(*cache)[n] = st
	return st, nil
}

// annotationIDBlock is how many annotation ids a PostgreSQL import takes from the sequence at
// a time (as turnIDBlock).
const annotationIDBlock = 4096

var (
	copyAnnotationColumns = append(slices.Clip(annotationColumns), "id")
	copyValueColumns      = []string{"annotation_id", "field", "value"}
)

// copyLabels writes the rows with two COPYs inside a savepoint, the ids taken from the
// sequence beforehand (as copyTurns). A constraint broken rolls the savepoint back.
func (im *Importer) copyLabels(idx []int, turnIDs, aids []int64, ls []*dataset.Label) (first int64, ok bool, err error) {
	st := &im.labels
	if len(st.annotationIDs) < len(idx) {
		if err := im.takeAnnotationIDs(max(annotationIDBlock, len(idx))); err != nil {
			return 0, false, err
		}
	}
	mine := st.annotationIDs[:len(idx)]
	st.annotationIDs = st.annotationIDs[len(idx):]
	rows := make([][]any, 0, len(idx))
	vals := make([][]any, 0, 6*len(idx))
	for j, i := range idx {
		rows = append(rows, append(labelRow(turnIDs[i], aids[i], im.batch, ls[i]), mine[j]))
		vals = valueRows(vals, mine[j], ls[i])
	}
	err = im.s.savepoint(im.ctx, im.conn, func() error {
		return im.conn.Raw(func(dc any) error {
			c := pgxConn(dc)
			if c == nil {
				return fmt.Errorf("not a PostgreSQL connection")
			}
			if _, err := c.CopyFrom(im.ctx, pgx.Identifier{"annotations"}, copyAnnotationColumns, pgx.CopyFromRows(rows)); err != nil {
				return err
			}
			_, err := c.CopyFrom(im.ctx, pgx.Identifier{"annotation_values"}, copyValueColumns, pgx.CopyFromRows(vals))
			return err
		})
	})
	if err != nil {
		if isConstraint(err) {
			return 0, false, nil // the ids taken stay unused: gaps
		}
		return 0, false, fmt.Errorf("store labels: %w", err)
	}
	return slices.Min(mine), true, nil
}

// takeAnnotationIDs takes the next n ids of the annotations' sequence.
func (im *Importer) takeAnnotationIDs(n int) error {
	st := &im.labels
	if st.annotationSeq == "" {
		if err := im.conn.QueryRowContext(im.ctx, `SELECT pg_get_serial_sequence('annotations', 'id')`).Scan(&st.annotationSeq); err != nil {
			return fmt.Errorf("annotation ids: %w", err)
		}
	}
	rows, err := im.conn.QueryContext(im.ctx, `SELECT nextval(?::regclass) FROM generate_series(1, ?)`, st.annotationSeq, n)
	if err != nil {
		return fmt.Errorf("annotation ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("annotation ids: %w", err)
		}
		st.annotationIDs = append(st.annotationIDs, id)
	}
	return rows.Err()
}
