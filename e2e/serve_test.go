package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sshServer is `m3eval serve` on 127.0.0.1 with a free port, its log kept.
type sshServer struct {
	t    *testing.T
	cmd  *exec.Cmd
	port string
	mu   sync.Mutex
	log  bytes.Buffer
	done chan error
}

func (s *sshServer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Write(p)
}

func (s *sshServer) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// waitLog waits until the server's log matches re.
func (s *sshServer) waitLog(re string) []string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(waitDeadline)
	for time.Now().Before(deadline) {
		if m := rx.FindStringSubmatch(s.logText()); m != nil {
			return m
		}
		time.Sleep(30 * time.Millisecond)
	}
	s.t.Fatalf("waited %v for %q in the server's log:\n%s", waitDeadline, re, s.logText())
	return nil
}

func startServer(t *testing.T, bin, db, dir string, extra ...string) *sshServer {
	t.Helper()
	s := &sshServer{t: t, done: make(chan error, 1)}
	args := append([]string{"--db", db, "serve", "--listen", "127.0.0.1:0",
		"--host-key", filepath.Join(dir, "hostkey", "host_ed25519"),
		"--annotators", filepath.Join(dir, "annotators.txt")}, extra...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s, s
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	s.port = s.waitLog(`listening on 127\.0\.0\.1:(\d+)`)[1]
	return s
}

// sshKey makes a key pair in dir and returns the private key's path and the public line.
func sshKey(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name+"@laptop", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.TrimSpace(string(pub))
}

// sshCommand is the OpenSSH client's command line for a key.
func (s *sshServer) sshCommand(key string) string {
	return fmt.Sprintf("ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o IdentitiesOnly=yes -i %s -p %s -tt 127.0.0.1", key, s.port)
}

func needSSH(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing: .ci/run installs openssh-client", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// serveFixture is a demo database, keys for alice, bob, eve (unlisted) and an admin, and
// the annotators file listing alice (two keys) and bob.
type serveFixture struct {
	bin, dir, db                 string
	alice, alice2, bob, eve, adm string
	term                         *terminal
}

func newServeFixture(t *testing.T) *serveFixture {
	needSSH(t)
	f := &serveFixture{bin: binary(t), dir: t.TempDir(), term: newTerminal(t)}
	f.db = demoDB(t, f.bin, f.dir)
	var alicePub, alice2Pub, bobPub, admPub string
	f.alice, alicePub = sshKey(t, f.dir, "alice")
	f.alice2, alice2Pub = sshKey(t, f.dir, "alice2")
	f.bob, bobPub = sshKey(t, f.dir, "bob")
	f.eve, _ = sshKey(t, f.dir, "eve")
	f.adm, admPub = sshKey(t, f.dir, "adm")
	list := fmt.Sprintf("# team\nalice %s\nalice %s\nbob %s\n", alicePub, alice2Pub, bobPub)
	if err := os.WriteFile(filepath.Join(f.dir, "annotators.txt"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "admin_keys"), []byte(admPub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// done counts an annotator's submitted items in the database.
func doneCount(t *testing.T, db, annotator string) int {
	n := 0
	for _, fields := range stored(t, db, annotator) {
		if fields["_status"] == "done" {
			n++
		}
	}
	return n
}

func TestServeOverSSH(t *testing.T) {
	f := newServeFixture(t)
	srv := startServer(t, f.bin, f.db, f.dir, "--admin", filepath.Join(f.dir, "admin_keys"))

	hostKey := filepath.Join(f.dir, "hostkey", "host_ed25519")
	fi, err := os.Stat(hostKey)
	if err != nil {
		t.Fatalf("host key not created: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("host key mode %v, want 0600", fi.Mode().Perm())
	}

	t.Run("unlisted key refused at authentication, logged", func(t *testing.T) {
		f.term.t, srv.t = t, t
		cmd := exec.Command("sh", "-c", srv.sshCommand(f.eve)+" </dev/null")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 255 {
			t.Fatalf("ssh with an unlisted key: %v, want exit 255 (authentication refused)\n%s", err, out)
		}
		if text := string(out); !strings.Contains(text, "Permission denied (publickey)") {
			t.Errorf("refusal = %q, want the handshake refused", text)
		}
		srv.waitLog(`refused key SHA256:\S+ from 127\.0\.0\.1:\d+`)
		if n := len(stored(t, f.db, "eve")); n != 0 {
			t.Errorf("eve has %d annotations", n)
		}
	})

	t.Run("a listed key annotates under its name, burst keys all act", func(t *testing.T) {
		f.term.t, srv.t = t, t
		f.term.start("alice", srv.sshCommand(f.alice))
		f.term.waitFor("alice", "m3eval · alice", "item 1 of", "✓ saved")
		// Three items in one burst, as a fast typist over a stalled link delivers them.
		f.term.tmux("send-keys", "-t", "alice", "-l", "434\r54y5\r45y4\r")
		f.term.waitFor("alice", "3 done", "✓ saved")
		got := stored(t, f.db, "alice")
		if n := doneCount(t, f.db, "alice"); n != 3 {
			t.Fatalf("alice has %d items done, want 3: %v", n, got)
		}
		srv.waitLog(`session start alice key SHA256:\S+ from 127\.0\.0\.1:\d+`)
	})

	t.Run("o lists the image paths instead of opening a viewer", func(t *testing.T) {
		f.term.t, srv.t = t, t
		f.term.tmux("send-keys", "-t", "alice", "o")
		f.term.waitFor("alice", "images (on the server):")
	})

	t.Run("two annotators at once, nothing of the other reachable", func(t *testing.T) {
		f.term.t, srv.t = t, t
		// The pane outlives the client so that its last words (at SIGTERM) stay on screen.
		f.term.start("bob", "sh -c '"+srv.sshCommand(f.bob)+"; sleep 60'")
		f.term.waitFor("bob", "m3eval · bob", "item 1 of", "0 done")
		f.term.tmux("send-keys", "-t", "bob", "-l", "222\r")
		f.term.tmux("send-keys", "-t", "alice", "-l", "11y1\r")
		f.term.waitFor("bob", "1 done", "✓ saved")
		f.term.waitFor("alice", "4 done", "✓ saved")
		if n := doneCount(t, f.db, "bob"); n != 1 {
			t.Errorf("bob has %d done, want 1", n)
		}
		if n := doneCount(t, f.db, "alice"); n != 4 {
			t.Errorf("alice has %d done, want 4", n)
		}
		if s := f.term.screen("bob"); strings.Contains(s, "alice") {
			t.Errorf("bob's screen names alice:\n%s", s)
		}
	})

	t.Run("the same annotator twice stays consistent", func(t *testing.T) {
		f.term.t, srv.t = t, t
		f.term.start("alice2", srv.sshCommand(f.alice2)) // alice's second key
		f.term.waitFor("alice2", "m3eval · alice", "4 done", "✓ saved")
		// Both sessions stand on the same first unfinished item; the first saves a value.
		f.term.tmux("send-keys", "-t", "alice", "-l", "2")
		f.term.waitFor("alice", "✓ saved")
		waitStored(t, f.db, "alice", "the first session's value", func(m map[string]map[string]string) bool {
			for _, fields := range m {
				if fields["_status"] == "draft" && fields["correctness"] == "2" {
					return true
				}
			}
			return false
		})
		// The second moves away and back: it shows what the first saved, then adds its own.
		itemNo := regexp.MustCompile(`item (\d+) of`)
		at := itemNo.FindString(f.term.waitFor("alice2", "item "))
		f.term.tmux("send-keys", "-t", "alice2", "Right")
		f.term.until("alice2", "the next item", func(s string) bool {
			m := itemNo.FindString(s)
			return m != "" && m != at
		})
		f.term.tmux("send-keys", "-t", "alice2", "Left")
		within(t, f.term, "alice2", waitDeadline, "the first session's 2 on the second screen", func(s string) bool {
			return regexp.MustCompile(`Correctness\s+(正确性\s+)?2`).MatchString(s)
		})
		// The reloaded item focuses its first open field: the 3 goes there, and both stay.
		f.term.tmux("send-keys", "-t", "alice2", "-l", "3")
		f.term.waitFor("alice2", "✓ saved")

		waitStored(t, f.db, "alice", "both sessions' values", func(m map[string]map[string]string) bool {
			for _, fields := range m {
				if fields["_status"] == "draft" && fields["correctness"] == "2" && fields["reasoning_completeness"] == "3" {
					return true
				}
			}
			return false
		})
		f.term.tmux("send-keys", "-t", "alice2", "q")
		srv.waitLog(`session end alice key SHA256:\S+ from 127\.0\.0\.1:\d+ after \d+\S*, 0 item\(s\) done, closed`)
	})

	t.Run("admin sees the read-only status screen", func(t *testing.T) {
		f.term.t, srv.t = t, t
		f.term.start("adm", srv.sshCommand(f.adm))
		f.term.waitFor("adm", "read-only", "annotator", "alice", "bob", "today", "quality control")
		f.term.tmux("send-keys", "-t", "adm", "q")
		srv.waitLog(`session end \(admin\)`)
	})

	t.Run("kill -9 of the client loses nothing shown saved", func(t *testing.T) {
		f.term.t, srv.t = t, t
		ends := strings.Count(srv.logText(), "session end alice ")
		pid := f.term.start("alice3", srv.sshCommand(f.alice))
		screen0 := f.term.waitFor("alice3", "m3eval · alice", "✓ saved")
		f.term.tmux("send-keys", "-t", "alice3", "-l", "4455")
		// Wait for the screen the keys made, settled (saved and unchanged for 300 ms).
		var screen string
		var since time.Time
		within(t, f.term, "alice3", waitDeadline, "the typed values shown saved", func(s string) bool {
			if s == screen0 || !strings.Contains(s, "✓ saved") || s != screen {
				screen, since = s, time.Now()
				return false
			}
			return time.Since(since) > 300*time.Millisecond
		})
		m := regexp.MustCompile(`─ (\S+) · turn (\d+) `).FindStringSubmatch(screen)
		if m == nil {
			t.Fatalf("no item header on the screen:\n%s", screen)
		}
		sample := m[1] + "_turn_" + m[2]
		before := stored(t, f.db, "alice")
		syscall.Kill(pid, syscall.SIGKILL)
		deadline := time.Now().Add(waitDeadline)
		for strings.Count(srv.logText(), "session end alice ") == ends && time.Now().Before(deadline) {
			time.Sleep(30 * time.Millisecond)
		}
		if strings.Count(srv.logText(), "session end alice ") == ends {
			t.Fatalf("the server did not end the killed client's session:\n%s", srv.logText())
		}
		after := stored(t, f.db, "alice")
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("after kill -9 the database changed:\nbefore %v\nafter  %v", before, after)
		}
		// Every value the screen showed (with "✓ saved") is in the database.
		for field, label := range map[string]string{"correctness": "Correctness", "reasoning_completeness": "Reasoning Completeness", "overall_quality": "Overall Quality"} {
			v := regexp.MustCompile(label + `\s+(?:\S*[^\x00-\x7f]\S*\s+)?([1-5])\b`).FindStringSubmatch(screen)
			if v == nil {
				continue
			}
			if after[sample][field] != v[1] {
				t.Errorf("%s %s: the screen showed %s saved, the database holds %q", sample, field, v[1], after[sample][field])
			}
		}
		if len(after[sample]) < 3 {
			t.Errorf("%s: typed values missing: %v", sample, after[sample])
		}
	})

	t.Run("SIGTERM lets open sessions save and exits 0", func(t *testing.T) {
		f.term.t, srv.t = t, t
		f.term.tmux("send-keys", "-t", "bob", "-l", "chello from bob")
		f.term.waitFor("bob", "hello from bob")
		// The comment is saved 400 ms after the last key; the shutdown must not lose it.
		srv.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-srv.done:
			if err != nil {
				t.Fatalf("server after SIGTERM: %v\n%s", err, srv.logText())
			}
			srv.done <- nil
		case <-time.After(waitDeadline):
			t.Fatalf("server did not exit after SIGTERM:\n%s", srv.logText())
		}
		found := false
		for _, fields := range stored(t, f.db, "bob") {
			if fields["comments"] == "hello from bob" {
				found = true
			}
		}
		if !found {
			t.Errorf("bob's comment typed before SIGTERM was not saved: %v", stored(t, f.db, "bob"))
		}
		if !strings.Contains(srv.logText(), "shut down: every session saved and closed") {
			t.Errorf("log:\n%s", srv.logText())
		}
		f.term.waitFor("bob", "server is shutting down")
	})
}

func TestServeReloadAndIdle(t *testing.T) {
	f := newServeFixture(t)
	// Only alice at first.
	list := filepath.Join(f.dir, "annotators.txt")
	alicePub, _ := os.ReadFile(f.alice + ".pub")
	if err := os.WriteFile(list, []byte("alice "+string(alicePub)), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, f.bin, f.db, f.dir, "--idle-timeout", "2s")
	out, _ := exec.Command("sh", "-c", srv.sshCommand(f.bob)+" </dev/null").CombinedOutput()
	if !strings.Contains(string(out), "Permission denied (publickey)") {
		t.Fatalf("bob before the reload: %s", out)
	}
	bobPub, _ := os.ReadFile(f.bob + ".pub")
	if err := os.WriteFile(list, []byte("alice "+string(alicePub)+"bob "+string(bobPub)), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.waitLog(`keys reloaded: 2 annotator\(s\)`)
	// A broken edit keeps the keys in force.
	if err := os.WriteFile(list, []byte("alice ssh-ed25519 AAAAnotakey\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.waitLog(`keys not reloaded .*annotators.txt:1: key`)
	// The pane outlives the client so that its last words stay on the screen.
	f.term.start("bob", "sh -c '"+srv.sshCommand(f.bob)+"; sleep 60'")
	f.term.waitFor("bob", "m3eval · bob")
	f.term.tmux("send-keys", "-t", "bob", "-l", "3")
	f.term.waitFor("bob", "✓ saved")
	// No key for 2 s: the session saves and closes, and says why.
	srv.waitLog(`session end bob .* idle`)
	f.term.waitFor("bob", "session closed")
	found := false
	for _, fields := range stored(t, f.db, "bob") {
		found = found || fields["correctness"] == "3"
	}
	if !found {
		t.Errorf("bob's value was lost at the idle timeout")
	}
}

// TestServeCampaignQueue: a session opens the annotator's assigned queue when a campaign
// gives them one, as m3eval annotate --annotator does.
func TestServeCampaignQueue(t *testing.T) {
	f := newServeFixture(t)
	m3 := cli(t, f.bin, f.db)
	m3("sample", "--name", "pilot", "--n", "12", "--by", "action_type", "--seed", "3")
	var a struct {
		Annotators []struct {
			Name      string   `json:"name"`
			SampleIDs []string `json:"sample_ids"`
		} `json:"annotators"`
	}
	if err := json.Unmarshal([]byte(m3("assign", "--sample", "pilot", "--annotators", "alice,bob,carol", "--overlap", "2", "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	alice := a.Annotators[0].SampleIDs
	ep, turn, _ := strings.Cut(alice[0], "_turn_")
	srv := startServer(t, f.bin, f.db, f.dir)
	// The pane outlives the client, so that the session's last line stays on screen.
	f.term.start("alice", "sh -c '"+srv.sshCommand(f.alice)+"; sleep 60'")
	f.term.waitFor("alice", "alice · campaign pilot", fmt.Sprintf("item 1 of %d", len(alice)), ep+" · turn "+turn)
	f.term.tmux("send-keys", "-t", "alice", "q")
	srv.waitLog(`session end alice `)
	// As m3eval annotate does, the session ends with what it did (issue 40 item 9).
	f.term.waitFor("alice", "m3eval: 0 item(s) submitted this session in", fmt.Sprintf("0 of %d done", len(alice)))
}
