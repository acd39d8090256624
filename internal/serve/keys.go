package serve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"

	gossh "golang.org/x/crypto/ssh"
)

// Keys maps public keys to the people they identify. It is read whole from a file and never
// changed afterwards: a reload builds a new one.
type Keys struct {
	byKey map[string]string // marshalled public key → annotator name
	names []string
}

// Name is the person the key belongs to, if it is listed.
func (k *Keys) Name(key gossh.PublicKey) (string, bool) {
	if k == nil || key == nil {
		return "", false
	}
	n, ok := k.byKey[string(key.Marshal())]
	return n, ok
}

// Names are the listed people, in file order.
func (k *Keys) Names() []string { return k.names }

// Len is the number of listed keys.
func (k *Keys) Len() int { return len(k.byKey) }

// ParseAnnotators reads an annotators file, which lists the annotators' SSH keys. Each line
// is `NAME KEYTYPE BASE64 [comment]`, the authorized_keys format after the name, and a name
// may have several lines. `#` comments and blank lines are ignored. Errors name the file,
// line and field. A key listed under two names
// is an error: the key is the identity.
func ParseAnnotators(path string) (*Keys, error) {
	return parseKeyFile(path, true)
}

// ParseAdmins reads an admin key file, in the authorized_keys format without names. Every
// key in it opens the read-only status screen.
func ParseAdmins(path string) (*Keys, error) {
	return parseKeyFile(path, false)
}

func parseKeyFile(path string, named bool) (*Keys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read keys: %w", err)
	}
	k := &Keys{byKey: map[string]string{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := "admin"
		if named {
			// A line that is a key with no options before it has no name in front.
			if _, _, opts, _, err := gossh.ParseAuthorizedKey([]byte(line)); err == nil && len(opts) == 0 {
				return nil, fmt.Errorf("%s:%d: name: missing: the line starts with the key (want NAME ssh-ed25519 AAAA... [comment])", path, n)
			}
			var rest string
			name, rest, _ = strings.Cut(line, " ")
			name = strings.TrimSpace(name)
			line = strings.TrimSpace(rest)
			if err := checkName(name); err != nil {
				return nil, fmt.Errorf("%s:%d: name: %w", path, n, err)
			}
			if line == "" {
				return nil, fmt.Errorf("%s:%d: key: missing (want NAME ssh-ed25519 AAAA... [comment])", path, n)
			}
		}
		pub, _, _, _, err := gossh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: key: %w", path, n, err)
		}
		id := string(pub.Marshal())
		if other, ok := k.byKey[id]; ok && other != name {
			return nil, fmt.Errorf("%s:%d: key: %s is already %s's key", path, n, gossh.FingerprintSHA256(pub), other)
		}
		k.byKey[id] = name
		if !seen[name] {
			seen[name] = true
			k.names = append(k.names, name)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return k, nil
}

// checkName accepts the names an annotator may have: printable, no spaces, at most 64
// characters (they head the screen and every log line).
func checkName(name string) error {
	if name == "" {
		return errors.New("missing")
	}
	if len(name) > 64 {
		return fmt.Errorf("%q is longer than 64 bytes", name)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("%q has a space or control character", name)
		}
	}
	return nil
}
