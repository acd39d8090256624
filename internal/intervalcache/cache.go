// Package intervalcache keeps results that are costly to compute (the bootstrap intervals of
// m3eval score and report) in files under the user's cache directory, keyed by a
// fingerprint of everything they depend on, so that a second run on unchanged inputs reads
// them instead of resampling.
//
// The cache lives outside the database on purpose: score only reads the database, and
// neither writes to it nor creates files beside it. A cache entry that cannot be read, or
// whose key does not match, is treated as absent (the caller recomputes); a failed write is
// not an error either. Writes are atomic (a temporary file renamed over the entry), so two
// commands writing the same entry at once leave one whole entry, and the directory keeps
// only the newest Keep entries.
package intervalcache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/m3bench/m3eval/internal/outfile"
)

// EnvDir names the environment variable that overrides the cache's directory.
const EnvDir = "M3EVAL_CACHE_DIR"

// Keep is how many entries the directory keeps: the newest, by modification time.
const Keep = 64

// Cache is a directory of entries. A nil *Cache caches nothing.
type Cache struct {
	dir string
}

// Dir returns the directory the cache uses. It is $M3EVAL_CACHE_DIR when set, else
// m3eval/intervals under os.UserCacheDir(), and "" when neither is known.
func Dir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "m3eval", "intervals")
}

// Open returns the cache in Dir(), or nil (no caching) when there is no directory to use.
// The directory is made on the first Store.
func Open() *Cache {
	d := Dir()
	if d == "" {
		return nil
	}
	return &Cache{dir: d}
}

// At returns the cache in dir (tests and callers that choose the directory).
func At(dir string) *Cache { return &Cache{dir: dir} }

// entry is what a file holds: its key again (a file renamed or truncated by hand is not
// taken for another's) and the value.
type entry struct {
	Key  string          `json:"key"`
	Data json.RawMessage `json:"data"`
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key+".json") }

// Load reads the entry of key into v and says whether it did. A missing, unreadable or
// corrupt entry, or one that does not decode into v, gives false: the caller recomputes.
func (c *Cache) Load(key string, v any) bool {
	if c == nil {
		return false
	}
	b, err := os.ReadFile(c.path(key))
	if err != nil {
		return false
	}
	var e entry
	if json.Unmarshal(b, &e) != nil || e.Key != key || len(e.Data) == 0 {
		return false
	}
	return json.Unmarshal(e.Data, v) == nil
}

// Store writes v as the entry of key, atomically, then removes the oldest entries beyond
// Keep. Callers may ignore its error: a cache that cannot be written only costs time.
func (c *Cache) Store(key string, v any) error {
	if c == nil {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("interval cache: %w", err)
	}
	b, err := json.Marshal(entry{Key: key, Data: data})
	if err != nil {
		return fmt.Errorf("interval cache: %w", err)
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("interval cache: %w", err)
	}
	// Whole or not at all (a reader never parses half an entry), readable by the user alone.
	if err := outfile.WriteFile(c.path(key), b, 0o600); err != nil {
		return fmt.Errorf("interval cache %s: %w", c.dir, err)
	}
	c.prune()
	return nil
}

// prune removes the oldest entries beyond Keep, and temporary files an hour old or more
// (left by a command that was killed while writing).
func (c *Cache) prune() {
	des, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type aged struct {
		name string
		mod  int64
	}
	var es []aged
	for _, de := range des {
		info, err := de.Info()
		if err != nil {
			continue
		}
		if outfile.IsTemp(de.Name()) && time.Since(info.ModTime()) > time.Hour {
			_ = os.Remove(filepath.Join(c.dir, de.Name()))
		}
		if !strings.HasSuffix(de.Name(), ".json") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		es = append(es, aged{de.Name(), info.ModTime().UnixNano()})
	}
	if len(es) <= Keep {
		return
	}
	slices.SortFunc(es, func(a, b aged) int {
		switch {
		case a.mod > b.mod:
			return -1
		case a.mod < b.mod:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	for _, e := range es[Keep:] {
		_ = os.Remove(filepath.Join(c.dir, e.name))
	}
}

// Key is the fingerprint of an entry, built from its parts. Every part is written with its
// length, so ("ab", "c") and ("a", "bc") differ.
type Key struct {
	h   hash.Hash
	buf []byte
}

// NewKey starts a fingerprint of kind with the program's identity. That is its module
// version and VCS revision, and the size and modification time of its executable, so that a
// rebuilt m3eval (whose statistics may differ) does not read what another build stored.
func NewKey(kind string) *Key {
	k := &Key{h: sha256.New()}
	k.Add("m3eval interval cache v1", kind)
	if info, ok := debug.ReadBuildInfo(); ok {
		k.Add(info.GoVersion, info.Main.Path, info.Main.Version)
		for _, s := range info.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				k.Add(s.Key, s.Value)
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			k.Add(exe, fmt.Sprint(st.Size(), st.ModTime().UnixNano()))
		}
	}
	return k
}

// Add writes parts to the fingerprint.
func (k *Key) Add(parts ...string) {
	k.buf = k.buf[:0]
	for _, p := range parts {
		k.buf = binary.LittleEndian.AppendUint64(k.buf, uint64(len(p)))
		k.buf = append(k.buf, p...)
	}
	k.h.Write(k.buf)
}

// AddJSON writes v's JSON encoding (maps in key order) to the fingerprint.
func (k *Key) AddJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprintf("%#v", v))
	}
	k.Add(string(b))
}

// String returns the fingerprint in hex: the entry's name.
func (k *Key) String() string { return hex.EncodeToString(k.h.Sum(nil)) }
