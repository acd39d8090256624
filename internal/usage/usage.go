// Package usage marks errors in how a command was called (a flag value, flags that exclude
// each other, a missing flag) so that the CLI, which decides nothing itself, exits with
// status 2 for them and 1 for everything else. The marked error's text is unchanged.
package usage

import (
	"errors"
	"fmt"
)

// Err is the mark of a usage error. errors.Is(err, usage.Err) holds for every error Errorf or
// Wrap built.
var Err = errors.New("usage")

type marked struct{ error }

func (e marked) Is(target error) bool { return target == Err }
func (e marked) Unwrap() error        { return e.error }

// Errorf is fmt.Errorf marked as a usage error.
func Errorf(format string, args ...any) error { return marked{fmt.Errorf(format, args...)} }

// OneStdin fails, as a usage error, when standard input ("-") is given for more than one of
// a command's files: it can be read only once.
func OneStdin(paths ...string) error {
	n := 0
	for _, p := range paths {
		if p == "-" {
			n++
		}
	}
	if n > 1 {
		return Errorf("standard input (-) can be given for one file only")
	}
	return nil
}

// Wrap marks err as a usage error; nil stays nil.
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return marked{err}
}
