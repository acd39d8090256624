package estimate

import (
	"context"
	"io"

	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// Run is m3eval estimate once its flags are parsed and its database is open: it checks the
// request and computes every estimate (Compute), and returns the function that writes them
// in q.Format. The command and the tests both call it, so the tests run the command's own
// path (issue #42). It computes before it returns the writer, as workflow.SampleRequest.Run
// does, so that an error comes before any output file is touched. database is the name the
// JSON gives the database (the file's base name).
func (q *Request) Run(ctx context.Context, s *store.Store, r *rubric.Rubric, database string) (func(io.Writer) error, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	res, err := Compute(ctx, s, r, q, database)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		if q.Format == render.JSON {
			return render.WriteJSON(w, res)
		}
		return WriteTable(w, res)
	}, nil
}
