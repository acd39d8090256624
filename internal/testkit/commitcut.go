package testkit

import (
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// CommitCutter is a TCP proxy on 127.0.0.1 in front of a PostgreSQL server. Armed, it cuts
// the connection that carries the next COMMIT's reply (CommandComplete "COMMIT") instead of
// passing the reply on: the server has committed, and the client cannot know it.
type CommitCutter struct {
	ln       net.Listener
	upstream func() (net.Conn, error)
	// Armed set: the next COMMIT reply is cut (and Armed cleared).
	Armed atomic.Bool
	// Cuts counts the replies cut.
	Cuts atomic.Int64
	wg   sync.WaitGroup
}

// NewCommitCutter starts a proxy to the server of dsn and returns it with the address of dsn
// rewritten to go through it.
func NewCommitCutter(t testing.TB, dsn string) (*CommitCutter, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	host, port := q.Get("host"), q.Get("port")
	if host == "" {
		host, port = u.Hostname(), u.Port()
	}
	if port == "" {
		port = "5432"
	}
	upstream := func() (net.Conn, error) {
		if filepath.IsAbs(host) {
			return net.Dial("unix", filepath.Join(host, ".s.PGSQL."+port))
		}
		return net.Dial("tcp", net.JoinHostPort(host, port))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &CommitCutter{ln: ln, upstream: upstream}
	t.Cleanup(func() { ln.Close(); c.wg.Wait() })
	go c.serve()
	q.Del("host")
	q.Del("port")
	q.Set("sslmode", "disable")
	u.Host = ln.Addr().String()
	u.RawQuery = q.Encode()
	return c, u.String()
}

func (c *CommitCutter) serve() {
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		server, err := c.upstream()
		if err != nil {
			client.Close()
			continue
		}
		c.wg.Add(2)
		go func() { defer c.wg.Done(); io.Copy(server, client); server.Close() }()
		go func() { defer c.wg.Done(); c.relay(client, server); client.Close(); server.Close() }()
	}
}

// relay passes the server's messages on one by one (a type byte, a length, the body), and
// cuts both sides at a COMMIT's CommandComplete when armed.
func (c *CommitCutter) relay(client, server net.Conn) {
	head := make([]byte, 5)
	for {
		if _, err := io.ReadFull(server, head); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[1:])-4)
		if _, err := io.ReadFull(server, body); err != nil {
			return
		}
		if head[0] == 'C' && string(body) == "COMMIT\x00" && c.Armed.CompareAndSwap(true, false) {
			c.Cuts.Add(1)
			return
		}
		if _, err := client.Write(append(head, body...)); err != nil {
			return
		}
	}
}
