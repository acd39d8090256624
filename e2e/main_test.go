package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// TestMain gives the binaries the tests run an interval cache of their own, so that a test
// run leaves nothing in the user's ~/.cache and no run reuses another's intervals, and
// removes the one binary the tests share.
//
// Under -short every e2e test is skipped: each drives the built binary in tmux, over SSH or
// in Chromium, which takes minutes, and `make test-short` is the quick loop. `make test`
// runs them.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped under -short (make test runs the end-to-end tests)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "m3eval-e2e-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("M3EVAL_CACHE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}
