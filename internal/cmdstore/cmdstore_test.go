package cmdstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdstore"
	"github.com/m3bench/m3eval/internal/store"
)

// TestOpen: a database that is not there is a plain sentence for the commands that only
// read, and made for those that create one; the rubric recorded is the one read, once.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "team.db")
	e := &cmdio.IO{DB: db}
	if _, _, err := cmdstore.Open(ctx, e, store.Options{}, false); err == nil || err.Error() != "no database at "+db+": import turns first (m3eval import FILE), or pass --db" {
		t.Fatalf("a missing database: %v", err)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("the refused open left a file behind: %v", err)
	}
	s, r, err := cmdstore.Open(ctx, e, store.Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r != e.Rubric || r.Name == "" {
		t.Errorf("the rubric read is not the one kept: %p %p", r, e.Rubric)
	}
	if err := cmdstore.MustExist(e); err != nil {
		t.Errorf("after create: %v", err)
	}

	// --rubric - reads standard input once; the second call must not read it again.
	in := strings.NewReader(string(annotations.DefaultRubric))
	e2 := &cmdio.IO{DB: db, RubricPath: "-", In: in}
	r1, err := e2.LoadRubric()
	if err != nil {
		t.Fatal(err)
	}
	r2, err := e2.LoadRubric()
	if err != nil || r2 != r1 || in.Len() != 0 {
		t.Errorf("second LoadRubric: %p %p %v (unread %d)", r1, r2, err, in.Len())
	}
}
