package e2e

import (
	"os"
	"testing"
)

// TestMain gives the binaries the tests run an interval cache of their own, so that a test
// run leaves nothing in the user's ~/.cache and no run reuses another's intervals.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "m3eval-e2e-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("M3EVAL_CACHE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
