package main

import (
	"io"
	"os"
)

// stdinName is how errors name standard input ("stdin:3: turn: ...").
const stdinName = "stdin"

// openInput opens a file argument; "-" is standard input, for every file argument of every
// command. The name is the one errors use.
func openInput(path string, stdin io.Reader) (io.ReadCloser, string, error) {
	if path == "-" {
		return io.NopCloser(stdin), stdinName, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}

// oneStdin fails when standard input is given for more than one file argument: it can be read
// only once.
func oneStdin(paths ...string) error {
	n := 0
	for _, p := range paths {
		if p == "-" {
			n++
		}
	}
	if n > 1 {
		return usageErrorf("standard input (-) can be given for one file only")
	}
	return nil
}
