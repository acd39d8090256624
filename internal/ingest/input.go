package ingest

import (
	"io"
	"os"
)

// StdinName is how errors name standard input, as in "stdin:3: turn: ...".
const StdinName = "stdin"

// OpenInput opens a file argument of any command. "-" is standard input. The name it
// returns is the one errors use.
func OpenInput(path string, stdin io.Reader) (io.ReadCloser, string, error) {
	if path == "-" {
		return io.NopCloser(stdin), StdinName, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}
