package intervalcache

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/outfile"
)

type val struct {
	A float64 `json:"a"`
	B string  `json:"b"`
}

// TestStoreLoad: what Store writes Load reads back, exactly; a missing key, a corrupt file,
// an entry under another key's name and a nil cache all read as absent.
func TestStoreLoad(t *testing.T) {
	c := At(filepath.Join(t.TempDir(), "d", "e")) // made on the first Store
	var got val
	if c.Load("k1", &got) {
		t.Fatal("an empty cache had k1")
	}
	want := val{A: 0.1 + 0.2, B: "x"}
	if err := c.Store("k1", want); err != nil {
		t.Fatal(err)
	}
	if !c.Load("k1", &got) || got != want {
		t.Fatalf("Load = %+v, want %+v", got, want)
	}
	b, err := os.ReadFile(c.path("k1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.path("k2"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if c.Load("k2", &got) {
		t.Error("k1's entry copied to k2's name was read as k2's")
	}
	for _, bad := range []string{"", "{", `{"key":"k1"}`, `{"key":"k1","data":"zz"}`, "\x00\x01"} {
		if err := os.WriteFile(c.path("k1"), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if c.Load("k1", &got) {
			t.Errorf("corrupt entry %q was read", bad)
		}
	}
	var none *Cache
	if none.Load("k1", &got) || none.Store("k1", want) != nil {
		t.Error("a nil cache cached")
	}
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if outfile.IsTemp(e.Name()) {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestPrune: the directory keeps the newest Keep entries, and removes temporary files an
// hour old.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	c := At(dir)
	old := time.Now().Add(-2 * time.Hour)
	stale := filepath.Join(dir, ".k1.json.tmp-123") // as outfile.Replace names them
	if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(stale, old, old)
	for i := 0; i < Keep+5; i++ {
		key := string(rune('a'+i/26)) + string(rune('a'+i%26))
		if err := c.Store(key, val{A: float64(i)}); err != nil {
			t.Fatal(err)
		}
		// The first five are the oldest by modification time whatever the clock's grain.
		mt := old.Add(time.Duration(i) * time.Second)
		os.Chtimes(c.path(key), mt, mt)
	}
	c.prune()
	ents, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(ents) != Keep {
		t.Fatalf("%d entries kept, want %d", len(ents), Keep)
	}
	var v val
	if c.Load("aa", &v) || c.Load("ae", &v) || !c.Load("af", &v) {
		t.Error("prune did not remove exactly the five oldest entries")
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale temporary file is still there: %v", err)
	}
}

// TestKeyParts: parts are length-prefixed, so moving a boundary changes the key.
func TestKeyParts(t *testing.T) {
	a, b := NewKey("t"), NewKey("t")
	a.Add("ab", "c")
	b.Add("a", "bc")
	if a.String() == b.String() {
		t.Error(`("ab","c") and ("a","bc") have one key`)
	}
	c, d := NewKey("t"), NewKey("t")
	c.Add("ab", "c")
	d.Add("ab", "c")
	if c.String() != d.String() {
		t.Error("the same parts gave two keys")
	}
}

// TestDir: $M3EVAL_CACHE_DIR wins; otherwise the user's cache directory.
func TestDir(t *testing.T) {
	t.Setenv(EnvDir, "/some/where")
	if Dir() != "/some/where" {
		t.Errorf("Dir() = %q", Dir())
	}
	t.Setenv(EnvDir, "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if base, err := os.UserCacheDir(); err == nil && Dir() != filepath.Join(base, "m3eval", "intervals") {
		t.Errorf("Dir() = %q", Dir())
	}
}

// TestConcurrentStore: writers of one key and readers at once: once the entry exists, every
// read finds a whole entry (the rename replaces it at once), never a half-written one.
func TestConcurrentStore(t *testing.T) {
	c := At(t.TempDir())
	big := val{B: string(make([]byte, 1<<16))}
	if err := c.Store("k", big); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for w := 0; w < 4; w++ {
		go func(w int) {
			var err error
			for i := 0; i < 50 && err == nil; i++ {
				err = c.Store("k", val{A: float64(w*100 + i), B: big.B})
			}
			done <- err
		}(w)
	}
	misses := 0
	for r := 0; r < 4; {
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
			r++
		default:
			var v val
			if !c.Load("k", &v) || len(v.B) != len(big.B) {
				misses++
			}
		}
	}
	if misses > 0 {
		t.Errorf("%d reads found no whole entry while it was rewritten", misses)
	}
}
