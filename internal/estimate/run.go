package estimate

import (
	"context"
	"io"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdstore"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/store"
)

// Run is m3eval estimate once its flags are parsed (docs/architecture.md, "How a command is
// wired"): it checks the request, opens the database read only, computes every estimate
// (Compute) and writes them in q.Format to e's output or -o. It computes before it writes,
// so that an error comes before any output file is touched. The JSON names the database by
// its file's base name. Errors of the command line are marked usage.Err.
func (q *Request) Run(ctx context.Context, e *cmdio.IO) error {
	if err := q.Check(); err != nil {
		return err
	}
	s, r, err := cmdstore.Open(ctx, e, store.Options{ReadOnly: true}, false)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := Compute(ctx, s, r, q, store.BaseName(s.Path()))
	if err != nil {
		return err
	}
	return e.Write(q.Output, string(q.Format), func(w io.Writer, _ bool) error {
		if q.Format == render.JSON {
			return render.WriteJSON(w, res)
		}
		return WriteTable(w, res)
	})
}
