package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/m3bench/m3eval/internal/dataset"
)

// turnIDBlock is how many turn ids an import on PostgreSQL takes from the sequence at a time:
// one round trip per block rather than per chunk. Ids taken and not used are gaps, which
// nothing minds: the fence only needs every row of a batch at or above it, and an id from the
// sequence is above every id stored when the batch began.
const turnIDBlock = 4096

// copyTurnColumns are the columns an import's COPY fills: a turn's row, its batch and its id.
var copyTurnColumns = append(slices.Clip(importTurnColumns), "import_batch", "id")

// copyTurns stores a chunk of new turns with PostgreSQL's COPY, their ids taken from the
// sequence beforehand, and appends the ids to ids. As on SQLite, ok is false when a row broke
// a constraint (a turn stored already): the COPY runs inside a savepoint, which is rolled back,
// and the caller goes turn by turn.
func (im *Importer) copyTurns(ts []dataset.Turn, ids []int64) (_ []int64, ok bool, err error) {
	if len(im.turnIDs) < len(ts) {
		if err := im.takeTurnIDs(); err != nil {
			return ids, false, err
		}
	}
	mine := im.turnIDs[:len(ts)]
	im.turnIDs = im.turnIDs[len(ts):]
	rows := im.copyRows[:0]
	for i := range ts {
		row, err := turnRow(make([]any, 0, len(copyTurnColumns)), &ts[i], im.chunkEpisodes[ts[i].EpisodeID])
		if err != nil {
			return ids, false, err
		}
		rows = append(rows, append(row, im.batch, mine[i]))
	}
	im.copyRows = rows
	err = im.s.savepoint(im.ctx, im.conn, func() error {
		return im.conn.Raw(func(dc any) error {
			c := pgxConn(dc)
			if c == nil {
				return fmt.Errorf("not a PostgreSQL connection")
			}
			_, err := c.CopyFrom(im.ctx, pgx.Identifier{"turns"}, copyTurnColumns, pgx.CopyFromRows(rows))
			return err
		})
	})
	if err != nil {
		if isConstraint(err) {
			return ids, false, nil // the ids taken stay unused: gaps
		}
		return ids, false, fmt.Errorf("store turns: %w", err)
	}
	return append(ids, mine...), true, nil
}

// takeTurnIDs takes the next turnIDBlock ids of the turns' sequence.
func (im *Importer) takeTurnIDs() error {
	if im.turnSeq == "" {
		if err := im.conn.QueryRowContext(im.ctx, `SELECT pg_get_serial_sequence('turns', 'id')`).Scan(&im.turnSeq); err != nil {
			return fmt.Errorf("turn ids: %w", err)
		}
	}
	rows, err := im.conn.QueryContext(im.ctx, `SELECT nextval(?::regclass) FROM generate_series(1, ?)`, im.turnSeq, turnIDBlock)
	if err != nil {
		return fmt.Errorf("turn ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("turn ids: %w", err)
		}
		im.turnIDs = append(im.turnIDs, id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("turn ids: %w", err)
	}
	slices.Sort(im.turnIDs)
	return nil
}

// jsonArray is the JSON text of a list of strings, [] for none, as the turns' images column
// holds it: encoding/json's text. Image paths are nearly always printable ASCII that JSON
// writes as it is; those are written here without encoding/json's reflection, which was most
// of the cost of building a turn's row (TestJSONArrayMatchesEncodingJSON).
func jsonArray(s []string) (string, error) {
	n := 2
	for _, e := range s {
		if !plainJSON(e) {
			b, err := json.Marshal(nonNil(s))
			return string(b), err
		}
		n += len(e) + 3
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('[')
	for i, e := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(e)
		b.WriteByte('"')
	}
	b.WriteByte(']')
	return b.String(), nil
}

// plainJSON tells a string that encoding/json writes between quotes as it is: printable
// ASCII without the quote, the backslash and the characters it escapes for HTML (<, >, &).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
