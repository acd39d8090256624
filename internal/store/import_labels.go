package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

func (im *Importer) annotatorID(name string) (int64, error) {
	if id, ok := im.annotatorIDs[name]; ok {
		return id, nil
	}
	id, err := ensureAnnotator(im.ctx, im.conn, name)
	if err != nil {
		return 0, err
	}
	im.annotatorIDs[name] = id
	return id, nil
}

// PutLabel stores an annotator's label for a turn put earlier in this import. The label must
// already be valid for the rubric; an identical stored label is left alone, a different one is
// an ErrConflict unless the import replaces.
func (im *Importer) PutLabel(turnID int64, l *dataset.Label) (dataset.Outcome, error) {
	if err := im.ensureTx(); err != nil {
		return 0, err
	}
	o, err := im.putLabel(turnID, l)
	if err != nil {
		return o, err
	}
	return o, im.maybeCommit()
}

// stagedLabel is a label to insert: at once when it is new, by Commit when it replaces one.
type stagedLabel struct {
	replaces, turnID, annotatorID int64
	l                             *dataset.Label
}

func (im *Importer) putLabel(turnID int64, l *dataset.Label) (dataset.Outcome, error) {
	aid, err := im.annotatorID(l.Annotator)
	if err != nil {
		return 0, err
	}
	ctx, conn := im.ctx, im.conn
	var existing annotationRow
	var batch sql.NullInt64
	err = conn.QueryRowContext(ctx, `SELECT id, status, flagged, flag_reason, rubric_version, active_ms,
		COALESCE(annotated_at, updated_at), stale, import_batch FROM annotations WHERE annotator_id = ? AND turn_id = ?`, aid, turnID).
		Scan(&existing.id, &existing.status, &existing.flagged, &existing.flagReason, &existing.rubricVersion,
			&existing.activeMS, &existing.at, &existing.stale, &batch)
	switch {
	case err == sql.ErrNoRows:
	case err != nil:
		return 0, err
	default:
		vals, err := loadValues(ctx, conn, existing.id)
		if err != nil {
			return 0, err
		}
		if existing.sameAs(l, vals) {
			return dataset.Unchanged, im.rely(claimAnnotation, existing.id, batch)
		}
		if !im.opts.Replace {
			return 0, fmt.Errorf("%w: %s already has a different label for this sample (use --replace to overwrite it)", ErrConflict, l.Annotator)
		}
		if !batch.Valid || batch.Int64 != im.batch {
			// A visible label changes only when the whole file is in (Commit).
			im.replacedLabels = append(im.replacedLabels, stagedLabel{existing.id, turnID, aid, l})
			return dataset.Replaced, nil
		}
		if _, err := conn.ExecContext(ctx, `DELETE FROM annotations WHERE id = ?`, existing.id); err != nil {
			return 0, err
		}
	}
	if err := im.insertLabel(&stagedLabel{0, turnID, aid, l}); err != nil {
		return 0, err
	}
	if existing.id != 0 {
		return dataset.Replaced, nil
	}
	return dataset.Inserted, nil
}

// insertLabel writes a label, in this import's batch; a replacement first deletes the label
// it replaces.
func (im *Importer) insertLabel(sl *stagedLabel) error {
	ctx, conn, l := im.ctx, im.conn, sl.l
	if sl.replaces != 0 {
		if _, err := conn.ExecContext(ctx, `DELETE FROM annotations WHERE id = ?`, sl.replaces); err != nil {
			return fmt.Errorf("replace label: %w", err)
		}
	}
	var id int64
	err := conn.QueryRowContext(ctx, `INSERT INTO annotations (`+strings.Join(annotationColumns, ", ")+`) VALUES (`+
		placeholders(len(annotationColumns))+`) RETURNING id`, labelRow(sl.turnID, sl.annotatorID, im.batch, l)...).Scan(&id)
	if err != nil {
		return fmt.Errorf("store label: %w", domainError(err))
	}
	if err := im.lowerFence(claimAnnotation, id); err != nil {
		return fmt.Errorf("store label: %w", err)
	}
	if err := im.insertValues(valueRows(nil, id, l)); err != nil {
		return fmt.Errorf("store label: %w", err)
	}
	return nil
}

type annotationRow struct {
	id                            int64
	status                        dataset.Status
	flagReason, rubricVersion, at string
	flagged, stale                bool
	activeMS                      int64
}

func (a *annotationRow) sameAs(l *dataset.Label, vals rubric.Values) bool {
	if a.status != l.Status || a.flagged != l.Flagged || a.flagReason != l.FlagReason ||
		a.rubricVersion != l.RubricVersion || a.activeMS != secondsToMS(l.ActiveSeconds) ||
		(!l.StampedNow && a.at != formatTime(l.AnnotatedAt)) || len(vals) != len(l.Values) {
		return false
	}
	for k, v := range l.Values {
		if vals[k] != v {
			return false
		}
	}
	return true
}

func loadValues(ctx context.Context, q querier, annotationID int64) (rubric.Values, error) {
	rows, err := q.QueryContext(ctx, `SELECT field, value FROM annotation_values WHERE annotation_id = ?`, annotationID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vals := rubric.Values{}
	for rows.Next() {
		var f, v string
		if err := rows.Scan(&f, &v); err != nil {
			return nil, err
		}
		vals[f] = v
	}
	return vals, rows.Err()
}

func secondsToMS(s float64) int64 { return int64(s*1000 + 0.5) }
