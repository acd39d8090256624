package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/keygen"
	gossh "golang.org/x/crypto/ssh"
)

// newKey makes an ed25519 key pair and returns its public key and authorized_keys line.
func newKey(t *testing.T) (gossh.PublicKey, string) {
	t.Helper()
	k, err := keygen.New("", keygen.WithKeyType(keygen.Ed25519))
	if err != nil {
		t.Fatal(err)
	}
	return k.PublicKey(), strings.TrimSpace(string(k.AuthorizedKey()))
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "annotators.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseAnnotators(t *testing.T) {
	a1, l1 := newKey(t)
	a2, l2 := newKey(t)
	b, lb := newKey(t)
	stranger, _ := newKey(t)
	k, err := ParseAnnotators(writeFile(t, "# the team\n\nalice "+l1+" laptop\nalice "+l2+"\n  bob "+lb+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  gossh.PublicKey
		name string
		ok   bool
	}{{a1, "alice", true}, {a2, "alice", true}, {b, "bob", true}, {stranger, "", false}} {
		if n, ok := k.Name(c.key); n != c.name || ok != c.ok {
			t.Errorf("Name = %q, %v; want %q, %v", n, ok, c.name, c.ok)
		}
	}
	if got := strings.Join(k.Names(), ","); got != "alice,bob" {
		t.Errorf("Names = %s", got)
	}
	var none *Keys
	if _, ok := none.Name(a1); ok {
		t.Error("a nil key set knows a key")
	}
}

func TestParseAnnotatorsErrorsNameLineAndField(t *testing.T) {
	_, l1 := newKey(t)
	for _, c := range []struct{ text, want string }{
		{"alice " + l1 + "\nbob\n", ":2: key: missing"},
		{"alice ssh-ed25519 AAAAnotbase64\n", ":1: key:"},
		{"\n" + l1 + "\n", ":2: name: missing"},
		{"alice " + l1 + "\nbob " + l1 + "\n", ":2: key: SHA256:"},
		{"al\x1bice " + l1 + "\n", ":1: name:"},
	} {
		p := writeFile(t, c.text)
		_, err := ParseAnnotators(p)
		if err == nil || !strings.Contains(err.Error(), p+c.want) {
			t.Errorf("%q: err = %v, want %q", c.text, err, p+c.want)
		}
	}
	if _, err := ParseAnnotators(filepath.Join(t.TempDir(), "missing.txt")); err == nil {
		t.Error("a missing file parsed")
	}
}

func TestParseAdmins(t *testing.T) {
	a, l := newKey(t)
	k, err := ParseAdmins(writeFile(t, l+" admin@desk\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := k.Name(a); !ok {
		t.Error("the admin key is not known")
	}
}
