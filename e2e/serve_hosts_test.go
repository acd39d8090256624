package e2e

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// sshScreen is one annotator's SSH session to m3eval serve (golang.org/x/crypto/ssh as the
// client, a "dumb" terminal so that no colour code splits the text looked for), with
// everything the server drew kept.
type sshScreen struct {
	client  *gossh.Client
	sess    *gossh.Session
	in      interface{ Write([]byte) (int, error) }
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

// dialScreen opens a session on the serve process at port with signer's key.
func dialScreen(port string, signer gossh.Signer) (*sshScreen, error) {
	client, err := gossh.Dial("tcp", "127.0.0.1:"+port, &gossh.ClientConfig{User: "annotator",
		Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)}, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	s := &sshScreen{client: client, changed: make(chan struct{}, 1)}
	fail := func(err error) (*sshScreen, error) {
		client.Close()
		return nil, err
	}
	if s.sess, err = client.NewSession(); err != nil {
		return fail(err)
	}
	if err := s.sess.RequestPty("dumb", 40, 120, gossh.TerminalModes{}); err != nil {
		return fail(err)
	}
	if s.in, err = s.sess.StdinPipe(); err != nil {
		return fail(err)
	}
	out, err := s.sess.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	go func() {
		b := make([]byte, 32*1024)
		for {
			n, err := out.Read(b)
			if n > 0 {
				s.mu.Lock()
				s.buf.Write(b[:n])
				s.mu.Unlock()
				select {
				case s.changed <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	if err := s.sess.Shell(); err != nil {
		return fail(err)
	}
	return s, nil
}

// mark is where the output ends now: waitFor(mark, …) looks only at what comes after.
func (s *sshScreen) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Len()
}

// waitFor waits until every text has appeared in the output after offset from; NOT SAVED
// there is an error at once.
func (s *sshScreen) waitFor(from int, texts ...string) error {
	deadline := time.After(waitDeadline)
	for {
		s.mu.Lock()
		out := s.buf.Bytes()[from:]
		all := true
		for _, text := range texts {
			all = all && bytes.Contains(out, []byte(text))
		}
		bad := bytes.Contains(out, []byte("NOT SAVED"))
		s.mu.Unlock()
		if bad {
			return fmt.Errorf("the screen says NOT SAVED")
		}
		if all {
			return nil
		}
		select {
		case <-s.changed:
		case <-deadline:
			s.mu.Lock()
			tail := s.buf.String()[max(0, s.buf.Len()-1500):]
			s.mu.Unlock()
			return fmt.Errorf("waited %v for %q; the output ends with %q", waitDeadline, texts, tail)
		}
	}
}

// send types keys, one write each (a person's keys, not a burst).
func (s *sshScreen) send(keys ...string) error {
	for _, k := range keys {
		if _, err := s.in.Write([]byte(k)); err != nil {
			return err
		}
	}
	return nil
}

func (s *sshScreen) close() { s.sess.Close(); s.client.Close() }

// loadSample parses a sample id of writeLoadTurns ("ld0000003_turn_4") into its item number
// of loadItem (1-based).
var loadSample = regexp.MustCompile(`^ld(\d{7})_turn_(\d+)$`)

func loadItemOf(t *testing.T, sample string) int {
	t.Helper()
	m := loadSample.FindStringSubmatch(sample)
	if m == nil {
		t.Fatalf("not a load sample id: %q", sample)
	}
	ep, _ := strconv.Atoi(m[1])
	turn, _ := strconv.Atoi(m[2])
	return ep*10 + turn
}

// screenItem is how the annotator's header names a sample: "ld0000003 · turn 4".
func screenItem(sample string) string {
	ep, turn, _ := strings.Cut(sample, "_turn_")
	return ep + " · turn " + turn
}

// TestServeTwoHostsOneCampaign: two m3eval serve processes (two ports on 127.0.0.1 standing
// for two hosts) on one PostgreSQL database and one campaign. alice works on host A while bob
// works on host B, both at once; halfway they swap hosts. Each finds on the other host the
// same queue (its length, the campaign, the next item after what they did on the first), and
// at the end each assigned item holds exactly what its annotator typed, nothing outside the
// assignment was labeled, and every turn is still assigned to as many annotators as the
// overlap says.
func TestServeTwoHostsOneCampaign(t *testing.T) {
	db := postgresPath(t)
	bin := binary(t)
	dir := t.TempDir()
	turns := filepath.Join(dir, "turns.jsonl")
	writeLoadTurns(t, turns, "ld", 60, "")
	m3 := cli(t, bin, db)
	m3("import", turns)
	m3("sample", "--name", "pilot", "--n", "24", "--by", "action_type", "--seed", "5")
	var plan struct {
		Annotators []struct {
			Name      string   `json:"name"`
			SampleIDs []string `json:"sample_ids"`
		} `json:"annotators"`
	}
	if err := json.Unmarshal([]byte(m3("assign", "--sample", "pilot", "--annotators", "alice,bob,carol", "--overlap", "2", "--format", "json")), &plan); err != nil {
		t.Fatal(err)
	}
	queues := map[string][]string{}
	for _, a := range plan.Annotators {
		queues[a.Name] = a.SampleIDs
	}
	names := []string{"alice", "bob"}
	signers := map[string]gossh.Signer{}
	var list strings.Builder
	for _, name := range names {
		if len(queues[name]) < 4 {
			t.Fatalf("%s's queue is %v: too short to swap hosts halfway", name, queues[name])
		}
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if signers[name], err = gossh.NewSignerFromKey(priv); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&list, "%s %s", name, gossh.MarshalAuthorizedKey(signers[name].PublicKey()))
	}
	if err := os.WriteFile(filepath.Join(dir, "annotators.txt"), []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// One host key for both hosts (the second reads the one the first created), as
	// docs/postgres.md advises.
	hosts := []*sshServer{startServer(t, bin, db, dir), startServer(t, bin, db, dir)}
	if hosts[0].port == hosts[1].port {
		t.Fatal("both serve processes listen on one port")
	}

	// work runs one annotator's part on one host: connect, check the queue shows item from of
	// n with that item, type items from..to, leave.
	work := func(name string, host *sshServer, from, to int) error {
		q := queues[name]
		s, err := dialScreen(host.port, signers[name])
		if err != nil {
			return err
		}
		defer s.close()
		if err := s.waitFor(0, name+" · campaign pilot", fmt.Sprintf("item %d of %d", from, len(q)),
			fmt.Sprintf(" %d done", from-1), screenItem(q[from-1])); err != nil {
			return fmt.Errorf("%s on port %s, opening at item %d: %w", name, host.port, from, err)
		}
		for k := from; k <= to; k++ {
			m := s.mark()
			if err := s.send(loadItemKeys(loadItemOf(t, q[k-1]))...); err != nil {
				return err
			}
			want := []string{fmt.Sprintf(" %d done", k)}
			if k < len(q) {
				want = append(want, screenItem(q[k]))
			}
			if err := s.waitFor(m, want...); err != nil {
				return fmt.Errorf("%s on port %s, item %d (%s): %w", name, host.port, k, q[k-1], err)
			}
		}
		return s.send("q")
	}
	// Both at once, alice on A and bob on B; then swapped.
	for round, hostOf := range []map[string]int{{"alice": 0, "bob": 1}, {"alice": 1, "bob": 0}} {
		var wg sync.WaitGroup
		errs := make([]error, len(names))
		for i, name := range names {
			n := len(queues[name])
			from, to := 1, n/2
			if round == 1 {
				from, to = n/2+1, n
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = work(name, hosts[hostOf[name]], from, to)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range names {
			hosts[hostOf[name]].waitLog(`session end ` + name + ` `)
		}
	}

	for _, name := range names {
		got := stored(t, db, name)
		assigned := map[string]bool{}
		for _, sample := range queues[name] {
			assigned[sample] = true
			_, want := loadItem(loadItemOf(t, sample))
			for f, v := range want {
				if got[sample][f] != v {
					t.Errorf("%s %s %s = %q, typed %q", name, sample, f, got[sample][f], v)
				}
			}
			if got[sample]["_status"] != "done" {
				t.Errorf("%s %s is %q, not done", name, sample, got[sample]["_status"])
			}
		}
		for sample := range got {
			if !assigned[sample] {
				t.Errorf("%s labeled %s, which is not in their queue", name, sample)
			}
		}
	}
	// The campaign itself is as assign left it: each turn with its overlap of 2 annotators.
	conn, _ := openRaw(t, db)
	defer conn.Close()
	var turnsWrong int
	if err := conn.QueryRow(`SELECT count(*) FROM (SELECT turn_id FROM assignments WHERE kind = 'main'
		GROUP BY turn_id HAVING count(DISTINCT annotator_id) <> 2) x`).Scan(&turnsWrong); err != nil {
		t.Fatal(err)
	}
	if turnsWrong != 0 {
		t.Errorf("%d turns are not assigned to exactly 2 annotators", turnsWrong)
	}
}

// logged waits until the server's log matches re, like waitLog, but returns an error rather
// than failing the test: for goroutines other than the test's.
func (s *sshServer) logged(re string) error {
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(waitDeadline)
	for !rx.MatchString(s.logText()) {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %v for %q in the log of the serve process on port %s", waitDeadline, re, s.port)
		}
		time.Sleep(30 * time.Millisecond)
	}
	return nil
}
