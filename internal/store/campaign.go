package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/m3bench/m3eval/internal/sample"
)

// sampleColumns are the turn attributes a sample may be stratified by or restricted on; a
// key "meta.NAME" reads the turn meta's NAME.
var sampleColumns = map[string]string{
	"action_type": "t.action_type",
	"task_type":   "t.task_type",
	"model":       "t.model",
	"turn":        "CAST(t.turn AS TEXT)",
}

var metaKey = regexp.MustCompile(`^meta\.[A-Za-z0-9_]+$`)

// SampleKeys lists the keys `--by` and `--where` accept.
func SampleKeys() []string {
	return append(slices.Sorted(maps.Keys(sampleColumns)), "meta.NAME")
}

// sampleColumn is the SQL of a key; ok is false for a key that names no attribute.
func (d dialect) sampleColumn(key string) (string, bool) {
	if c, ok := sampleColumns[key]; ok {
		return c, true
	}
	if metaKey.MatchString(key) {
		// A JSON value of any type compares as its text; a missing key is the empty value.
		return `COALESCE(` + d.metaText("t.meta", strings.TrimPrefix(key, "meta.")) + `, '')`, true
	}
	return "", false
}

// SampleParams are how a sample was drawn.
type SampleParams struct {
	By            []string            `json:"by"`
	Where         map[string][]string `json:"where,omitempty"`
	MinPerStratum int                 `json:"min_per_stratum"`
	// Active, for m3eval sample --active, says whose uncertainty chose the turns.
	Active *ActiveParams `json:"active,omitempty"`
}

// ActiveParams are how an active sample was drawn.
type ActiveParams struct {
	Judge string  `json:"judge"`
	Mix   float64 `json:"mix"` // the share of each probability that follows the uncertainty
}

// SampleStrata counts the population of a sample. That is the visible turns (none of an
// import still under way) that match Where, grouped by the values of By, sorted by key.
// SQLite does the counting, so a million turns never travel to Go.
func (s *Store) SampleStrata(ctx context.Context, p SampleParams) ([]sample.Count, error) {
	cols, where, args, err := s.d.sampleSQL(p)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+`, count(*) FROM visible_turns t WHERE `+where+
		` GROUP BY `+strings.Join(cols, ", "), args...)
	if err != nil {
		return nil, fmt.Errorf("sample: %w", err)
	}
	defer rows.Close()
	var out []sample.Count
	for rows.Next() {
		c := sample.Count{Key: make([]string, len(cols))}
		dest := make([]any, len(cols)+1)
		for i := range cols {
			dest[i] = &c.Key[i]
		}
		dest[len(cols)] = &c.N
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("sample: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sample: %w", err)
	}
	slices.SortFunc(out, func(a, b sample.Count) int { return slices.Compare(a.Key, b.Key) })
	return out, nil
}

// SampleTurnIDs returns the turns at the given 0-based positions (ascending) of a stratum
// in queue order. Each position is one index seek from the previous turn found, skipping
// the gap inside SQLite, so only the drawn turns come back to Go: reading a 200,000-turn
// stratum row by row in Go, or numbering it with a window function, took several times
// longer (BenchmarkSampleAssign1M).
func (s *Store) SampleTurnIDs(ctx context.Context, p SampleParams, key []string, positions []int) ([]int64, error) {
	cols, where, args, err := s.d.sampleSQL(p)
	if err != nil {
		return nil, err
	}
	if len(key) != len(cols) {
		return nil, fmt.Errorf("sample: a key of %d values for %d attributes", len(key), len(cols))
	}
	for i, c := range cols {
		where += " AND " + c + " = ?"
		args = append(args, key[i])
	}
	stmt, err := s.db.PrepareContext(ctx, `SELECT t.id, t.episode_id, t.turn FROM visible_turns t WHERE `+where+
		` AND (t.episode_id, t.turn) > (?, ?) ORDER BY t.episode_id, t.turn LIMIT 1 OFFSET ?`)
	if err != nil {
		return nil, fmt.Errorf("sample: %w", err)
	}
	defer stmt.Close()
	out := make([]int64, 0, len(positions))
	var ep int64
	var turn int
	prev := -1
	for _, pos := range positions {
		if pos <= prev {
			return nil, fmt.Errorf("sample: positions must ascend (%d after %d)", pos, prev)
		}
		var id int64
		err := stmt.QueryRowContext(ctx, append(slices.Clip(args), ep, turn, pos-prev-1)...).Scan(&id, &ep, &turn)
		if err != nil {
			return nil, fmt.Errorf("sample: stratum %s has no turn %d (did it change while sampling?): %w", sample.KeyString(key), pos, domainError(err))
		}
		out = append(out, id)
		prev = pos
	}
	return out, nil
}

// sampleSQL is the SQL of the stratifying columns and of the restriction.
func (d dialect) sampleSQL(p SampleParams) (cols []string, where string, args []any, err error) {
	if len(p.By) == 0 {
		return nil, "", nil, fmt.Errorf("sample: stratify by at least one attribute (%s)", strings.Join(SampleKeys(), ", "))
	}
	cols = make([]string, len(p.By))
	for i, k := range p.By {
		c, ok := d.sampleColumn(k)
		if !ok {
			return nil, "", nil, fmt.Errorf("sample: cannot stratify by %q (use %s)", k, strings.Join(SampleKeys(), ", "))
		}
		cols[i] = c
	}
	where, args, err = d.sampleWhere(p.Where)
	return cols, where, args, err
}

// sampleWhere turns KEY=VALUE restrictions into SQL: values of one key are alternatives,
// different keys must all hold.
func (d dialect) sampleWhere(w map[string][]string) (string, []any, error) {
	keys := slices.Sorted(maps.Keys(w))
	parts := []string{"true"}
	var args []any
	for _, k := range keys {
		c, ok := d.sampleColumn(k)
		if !ok {
			return "", nil, fmt.Errorf("sample: cannot restrict on %q (use %s)", k, strings.Join(SampleKeys(), ", "))
		}
		parts = append(parts, c+" IN ("+placeholders(len(w[k]))+")")
		for _, v := range w[k] {
			args = append(args, v)
		}
	}
	return strings.Join(parts, " AND "), args, nil
}

// SampleInfo describes a stored sample.
type SampleInfo struct {
	Name      string
	Seed      int64
	Size      int
	Params    SampleParams
	CreatedAt time.Time
	// Strata are the sample's strata without their items.
	Strata []sample.Stratum
	// Assigned tells whether the sample has been given to annotators.
	Assigned bool
}

// SaveSample stores a drawn sample under its name, in one transaction. A name in use is
// ErrConflict.
func (s *Store) SaveSample(ctx context.Context, info SampleInfo, strata []sample.Stratum) error {
	params, err := json.Marshal(info.Params)
	if err != nil {
		return err
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO samples (name, seed, size, params, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		info.Name, info.Seed, info.Size, string(params), formatTime(s.Now())).Scan(&id)
	if err != nil {
		return fmt.Errorf("save sample %s: %w", info.Name, domainError(err))
	}
	stStmt, err := tx.PrepareContext(ctx, `INSERT INTO sample_strata (sample_id, position, key, available, allocated, drawn) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stStmt.Close()
	tStmt, err := tx.PrepareContext(ctx, `INSERT INTO sample_turns (sample_id, turn_id, stratum, inclusion_probability) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer tStmt.Close()
	for i, st := range strata {
		key, err := json.Marshal(st.Key)
		if err != nil {
			return err
		}
		if _, err := stStmt.ExecContext(ctx, id, i, string(key), st.Available, st.Allocated, st.Drawn); err != nil {
			return fmt.Errorf("save sample %s: %w", info.Name, err)
		}
		for k, t := range st.Items {
			var incl any // NULL: a stratified sample
			if st.Inclusion != nil {
				incl = st.Inclusion[k]
			}
			if _, err := tStmt.ExecContext(ctx, id, t, i, incl); err != nil {
				return fmt.Errorf("save sample %s: %w", info.Name, domainError(err))
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save sample %s: %w", info.Name, err)
	}
	return nil
}

// Samples lists the stored samples, oldest first, with their strata.
func (s *Store) Samples(ctx context.Context) ([]SampleInfo, error) {
	names, err := s.db.QueryContext(ctx, `SELECT name FROM samples ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list samples: %w", err)
	}
	list, err := scanStrings(names)
	if err != nil {
		return nil, fmt.Errorf("list samples: %w", err)
	}
	out := make([]SampleInfo, 0, len(list))
	for _, n := range list {
		info, err := s.Sample(ctx, n)
		if err != nil {
			return nil, err
		}
		out = append(out, *info)
	}
	return out, nil
}

// Sample reads the stored sample of that name. It returns ErrNotFound if there is none.
func (s *Store) Sample(ctx context.Context, name string) (*SampleInfo, error) {
	info := &SampleInfo{Name: name}
	var id int64
	var params, created string
	err := s.db.QueryRowContext(ctx, `SELECT id, seed, size, params, created_at, EXISTS (SELECT 1 FROM campaigns c WHERE c.sample_id = samples.id)
		FROM samples WHERE name = ?`, name).Scan(&id, &info.Seed, &info.Size, &params, &created, &info.Assigned)
	if err != nil {
		return nil, fmt.Errorf("sample %q: %w", name, domainError(err))
	}
	info.CreatedAt = parseTime(created)
	if err := json.Unmarshal([]byte(params), &info.Params); err != nil {
		return nil, fmt.Errorf("sample %q: params: %w", name, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT key, available, allocated, drawn FROM sample_strata WHERE sample_id = ? ORDER BY position`, id)
	if err != nil {
		return nil, fmt.Errorf("sample %q: %w", name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var st sample.Stratum
		var key string
		if err := rows.Scan(&key, &st.Available, &st.Allocated, &st.Drawn); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(key), &st.Key); err != nil {
			return nil, fmt.Errorf("sample %q: stratum key: %w", name, err)
		}
		info.Strata = append(info.Strata, st)
	}
	return info, rows.Err()
}

// SampleTurn is a turn of a sample (or a gold turn), in queue order.
type SampleTurn struct {
	TurnID   int64
	SampleID string
	Episode  int64
	Turn     int
}

// SampleTurns lists the sample's turns in queue order.
func (s *Store) SampleTurns(ctx context.Context, name string) ([]SampleTurn, error) {
	if _, err := s.sampleID(ctx, s.db, name); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT t.id, t.sample_id, t.episode_id, t.turn FROM sample_turns st
		JOIN samples sa ON sa.id = st.sample_id JOIN turns t ON t.id = st.turn_id
		WHERE sa.name = ? ORDER BY t.episode_id, t.turn`, name)
	if err != nil {
		return nil, fmt.Errorf("sample %q: %w", name, err)
	}
	return scanSampleTurns(rows)
}

func scanSampleTurns(rows *sql.Rows) ([]SampleTurn, error) {
	defer rows.Close()
	var out []SampleTurn
	for rows.Next() {
		var t SampleTurn
		if err := rows.Scan(&t.TurnID, &t.SampleID, &t.Episode, &t.Turn); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (s *Store) sampleID(ctx context.Context, db querier, name string) (int64, error) {
	var id int64
	if err := db.QueryRowContext(ctx, `SELECT id FROM samples WHERE name = ?`, name).Scan(&id); err != nil {
		return 0, fmt.Errorf("sample %q: %w", name, domainError(err))
	}
	return id, nil
}
