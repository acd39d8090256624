package store

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

// StaleLabel is a label of a turn whose content `import --replace` changed: it was made on
// earlier content.
type StaleLabel struct {
	SampleID  string
	Annotator string
	WasDone   bool     // it was submitted; now it is a draft to re-confirm
	Dropped   []string // "field=value" the new content does not allow (never kept)
	Deleted   bool     // --drop-labels: deleted, not kept

	turnID int64
}

// replacedTurn is a stored turn whose content an import replaces: Commit marks its labels.
type replacedTurn struct {
	id       int64
	sampleID string
	item     rubric.Item // the new content, as the rubric sees it
}

// relabeled forgets the stale label of an annotator on a turn when the same import gives that
// annotator a new label for it: the list must not claim a draft waits for re-confirmation.
func (im *Importer) relabeled(turnID int64, annotator string) {
	kept := im.stale[:0]
	for _, sl := range im.stale {
		if sl.turnID != turnID || sl.Annotator != annotator || sl.Deleted {
			kept = append(kept, sl)
		}
	}
	im.stale = kept
}

// StaleLabels lists the labels this import found on replaced turns, in the order met.
func (im *Importer) StaleLabels() []StaleLabel { return im.stale }

// staleLabels deals with the labels of a turn whose content was just replaced. They were made
// on what the annotator saw then, so none of them may silently stay: with DropLabels they are
// deleted; otherwise each is kept as a draft marked stale (out of score and of "done" until the
// annotator submits it again), and any value the turn's new content does not allow (a
// mislead turn become follow_up keeps no "No" for resists_misleading) is removed, the rubric's
// fixed values applied instead.
// Labels this import itself brings for the turn are new, made on the new content: they stay.
func (im *Importer) staleLabels(rt replacedTurn) error {
	ctx, tx, turnID := im.ctx, im.conn, rt.id
	rows, err := tx.QueryContext(ctx, `SELECT a.id, an.name, a.status FROM annotations a
		JOIN annotators an ON an.id = a.annotator_id
		WHERE a.turn_id = ? AND a.import_batch IS DISTINCT FROM ? ORDER BY an.name`, turnID, im.batch)
	if err != nil {
		return fmt.Errorf("labels of a replaced turn: %w", err)
	}
	type label struct {
		id     int64
		name   string
		status dataset.Status
	}
	var labels []label
	for rows.Next() {
		var l label
		if err := rows.Scan(&l.id, &l.name, &l.status); err != nil {
			rows.Close()
			return err
		}
		labels = append(labels, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	item := rt.item
	for _, l := range labels {
		sl := StaleLabel{SampleID: rt.sampleID, Annotator: l.name, WasDone: l.status == dataset.StatusDone, turnID: turnID}
		if im.opts.DropLabels {
			if _, err := tx.ExecContext(ctx, `DELETE FROM annotations WHERE id = ?`, l.id); err != nil {
				return err
			}
			sl.Deleted = true
			im.stale = append(im.stale, sl)
			continue
		}
		if r := im.opts.Rubric; r != nil {
			vals, err := loadValues(ctx, tx, l.id)
			if err != nil {
				return err
			}
			kept := rubric.Values{}
			for _, name := range slices.Sorted(maps.Keys(vals)) {
				f, ok := r.Field(name)
				if !ok || f.Check(vals[name], item) != nil {
					sl.Dropped = append(sl.Dropped, name+"="+vals[name])
					continue
				}
				kept[name] = vals[name]
			}
			kept = r.Apply(kept, item)
			if _, err := tx.ExecContext(ctx, `DELETE FROM annotation_values WHERE annotation_id = ?`, l.id); err != nil {
				return err
			}
			for _, name := range slices.Sorted(maps.Keys(kept)) {
				if _, err := tx.ExecContext(ctx, `INSERT INTO annotation_values (annotation_id, field, value) VALUES (?, ?, ?)`,
					l.id, name, kept[name]); err != nil {
					return err
				}
			}
			sort.Strings(sl.Dropped)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE annotations SET stale = true, status = 'draft', annotated_at = NULL,
			updated_at = ? WHERE id = ?`, formatTime(im.s.Now()), l.id); err != nil {
			return err
		}
		im.stale = append(im.stale, sl)
	}
	return nil
}
