package tui_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"io"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// countingQueue is the store's real queue, counting the saves of a value that reach it.
type countingQueue struct {
	session.Queue
	sets atomic.Int32
}

func (c *countingQueue) SetValue(ctx context.Context, e session.Edit, field string, value *string) (*session.Annotation, error) {
	c.sets.Add(1)
	return c.Queue.SetValue(ctx, e, field, value)
}

// waitSeen waits for text, as waitFor does, and returns the output it read meanwhile.
func waitSeen(t *testing.T, tm *teatest.TestModel, text string) []byte {
	t.Helper()
	var seen []byte
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen = append(seen[:0], b...)
		return bytes.Contains(b, []byte(text))
	}, teatest.WithDuration(60*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	return seen
}

// TestRefusedWriteIsNotRetried: on PostgreSQL the annotator's role loses its INSERT and
// UPDATE privileges while the screen runs (an admin's REVOKE), so the server refuses every
// save (SQLSTATE 42501) and waiting cannot clear it. The screen says the change is not saved
// and that quitting loses it, never that it will land; the write is not retried, nothing
// queued behind it runs, two q quit, and nothing reached the database.
func TestRefusedWriteIsNotRetried(t *testing.T) {
	dsn := storetest.RequirePostgres(t)
	path := storetest.PostgresPath(t, dsn)
	storetest.Demo(t, path).Close()
	admin, err := sql.Open("pgx", path)
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	rand.Read(b[:])
	role := "m3eval_annotator_" + hex.EncodeToString(b[:])
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	sch := u.Query().Get("search_path")
	for _, stmt := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`GRANT USAGE ON SCHEMA ` + sch + ` TO ` + role,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ` + sch + ` TO ` + role,
		`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ` + sch + ` TO ` + role,
	} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		admin.Exec(`DROP OWNED BY ` + role)
		admin.Exec(`DROP ROLE ` + role)
		admin.Close()
	})
	u.User = url.User(role)
	s := storetest.Open(t, u.String(), store.Options{})
	actions, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{s: s, r: storetest.Rubric(t), actions: actions}
	ctx := context.Background()
	q, err := fx.s.OpenQueue(ctx, "rita", nil)
	if err != nil {
		t.Fatal(err)
	}
	cq := &countingQueue{Queue: q}
	tm := teatest.NewTestModel(t, fx.modelOn(cq, "demo_en_park_3_turn_4"), teatest.WithInitialTermSize(80, 40))
	waitFor(t, tm, "of 35")
	if _, err := admin.Exec(`REVOKE INSERT, UPDATE ON ALL TABLES IN SCHEMA ` + sch + ` FROM ` + role); err != nil {
		t.Fatal(err)
	}
	tm.Type("4")
	out := waitSeen(t, tm, "NOT SAVED for good: database refuses writes; quitting loses them")
	for _, line := range bytes.Split(out, []byte("\n")) {
		if bytes.Contains(line, []byte("NOT SAVED")) {
			t.Logf("screen: %s", line)
		}
	}
	tm.Type("3") // queued behind the refused write: it must not run either
	// Retries come 100 ms after a failure and then at least every 2 s: in 5 s a retry loop
	// would have saved again at least twice. (A bounded look for what must not happen; there
	// is no state to wait for.)
	time.Sleep(5 * time.Second)
	if n := cq.sets.Load(); n != 1 {
		t.Fatalf("the refused write reached the store %d times, want once (no retry, nothing run behind it)", n)
	}
	tm.Type("q")
	asked := waitSeen(t, tm, "2 change(s) NOT SAVED, refused by the database: q again quits and loses them")
	for _, line := range bytes.Split(asked, []byte("\n")) {
		if bytes.Contains(line, []byte("change(s) NOT SAVED")) {
			t.Logf("screen: %s", line)
		}
	}
	out = append(out, asked...)
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(60*time.Second))
	rest, _ := io.ReadAll(tm.FinalOutput(t))
	out = append(out, rest...)
	for _, lie := range []string{"retrying", "land when", "once they land", "✓ saved"} {
		if bytes.Contains(out, []byte(lie)) {
			t.Errorf("after the database refused the write the screen said %q:\n%s", lie, out)
		}
	}
	// Nothing of rita's reached the database.
	ref, _, err := q.Find(ctx, "demo_en_park_3_turn_4")
	if err != nil {
		t.Fatal(err)
	}
	it, err := q.Load(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if it.Annotation != nil && len(it.Annotation.Values) > 0 {
		t.Errorf("the database holds %v after the refusal", it.Annotation.Values)
	}
}
