package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The multi-instance test (multiinstance_test.go) runs real Herald binaries
// as child processes on one PostgreSQL database: what it must prove is what
// several processes do to each other, which no in-process server shows.

// multiKey and multiSecret are shared by every instance: one database, one
// set of keys, one secret sealing the credentials.
const (
	multiKey    = "multi-instance-key-0000000000000000"
	multiSecret = "multi-instance-secret-0123456789abcdef"
)

// buildHeraldBinary compiles this checkout into dir and returns the binary.
func buildHeraldBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "herald")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// dieWithTest has the kernel SIGKILL cmd when the test process dies: a
// test that times out, panics or is killed leaves no Herald running on a
// database its cleanup would have dropped. Only Linux has a parent-death
// signal, so the field is set by name where it exists; elsewhere the
// test's cleanup still kills what it started.
func dieWithTest(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{}
	if f := reflect.ValueOf(attr).Elem().FieldByName("Pdeathsig"); f.IsValid() {
		f.Set(reflect.ValueOf(syscall.SIGKILL))
	}
	cmd.SysProcAttr = attr
}

// heraldProcess is one running Herald.
type heraldProcess struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// heraldCluster is several Herald processes on one database, each with an
// address of its own that it keeps across restarts, as behind a load
// balancer.
type heraldCluster struct {
	t      *testing.T
	bin    string
	db     string
	dir    string
	addrs  []string
	client *http.Client

	mu    sync.Mutex
	procs []*heraldProcess // by node; nil while stopped
	pids  []int            // every process ever started, for chatReceiver
	runs  []int            // how many times each node has started
}

func newHeraldCluster(t *testing.T, bin, db string, n int) *heraldCluster {
	c := &heraldCluster{t: t, bin: bin, db: db, dir: t.TempDir(), procs: make([]*heraldProcess, n), runs: make([]int, n),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}}
	for range n {
		c.addrs = append(c.addrs, freeAddr(t))
	}
	t.Cleanup(func() {
		for i := range c.procs {
			c.kill(i)
		}
		if t.Failed() {
			c.printLogs()
		}
	})
	return c
}

func (c *heraldCluster) base(node int) string { return "http://" + c.addrs[node] }

// start starts node and waits until it answers /healthz. It may run on
// a goroutine of its own: it reports, never fails the test.
func (c *heraldCluster) start(node int) error {
	c.mu.Lock()
	c.runs[node]++
	logPath := filepath.Join(c.dir, fmt.Sprintf("node%d-run%d.log", node, c.runs[node]))
	c.mu.Unlock()
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.bin, "serve")
	cmd.Env = append(os.Environ(),
		"HERALD_ADDR="+c.addrs[node], "HERALD_DB="+c.db,
		"HERALD_API_KEY="+multiKey, "HERALD_SECRET="+multiSecret,
		"HERALD_LOG_LEVEL=warn",
		// The test sends faster than one key's default write rate.
		"HERALD_WRITE_RATE=0",
		// The chat receiver is an httptest server on loopback.
		"HERALD_OUTBOUND_ALLOW=127.0.0.1/32")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	p := &heraldProcess{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); logFile.Close(); close(p.done) }()
	c.mu.Lock()
	c.procs[node] = p
	c.pids = append(c.pids, cmd.Process.Pid)
	c.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("node %d exited at start:\n%s", node, tail(logPath, 20))
		default:
		}
		if res, err := c.client.Get(c.base(node) + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("node %d not ready after 30s:\n%s", node, tail(logPath, 20))
}

// kill ends node with SIGKILL, as a crash or an OOM kill would, and waits
// until it has exited.
func (c *heraldCluster) kill(node int) {
	c.mu.Lock()
	p := c.procs[node]
	c.procs[node] = nil
	c.mu.Unlock()
	if p == nil {
		return
	}
	p.cmd.Process.Kill()
	<-p.done
}

// pid is node's process id, 0 while it is stopped.
func (c *heraldCluster) pid(node int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.procs[node]; p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// everyPid is every process the cluster has started, dead ones included.
func (c *heraldCluster) everyPid() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.pids...)
}

// do sends one API request with the shared key to node and returns the
// status and body; a transport error (a killed node) is status 0.
func (c *heraldCluster) do(node int, method, path, body string, header ...string) (int, []byte) {
	status, _, b := c.call(node, method, path, body, header...)
	return status, b
}

// call is do that also returns the answer's header.
func (c *heraldCluster) call(node int, method, path, body string, header ...string) (int, http.Header, []byte) {
	req, err := http.NewRequest(method, c.base(node)+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	req.Header.Set("Authorization", "ApiKey "+multiKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.client.Do(req)
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

// must sends a request that must answer want, failing t otherwise.
func (c *heraldCluster) must(t *testing.T, node int, want int, method, path, body string) []byte {
	t.Helper()
	status, b := c.do(node, method, path, body)
	if status != want {
		t.Fatalf("%s %s on node %d: %d %s, want %d", method, path, node, status, b, want)
	}
	return b
}

// printLogs prints the end of every node's log; only a failed test calls it.
func (c *heraldCluster) printLogs() {
	paths, _ := filepath.Glob(filepath.Join(c.dir, "node*.log"))
	for _, p := range paths {
		c.t.Logf("--- %s (last lines)\n%s", filepath.Base(p), tail(p, 15))
	}
}

// errorLines counts the WARN and ERROR lines in every node's log by their
// level, message and error, ids and times left out.
func (c *heraldCluster) errorLines() map[string]int {
	out := map[string]int{}
	paths, _ := filepath.Glob(filepath.Join(c.dir, "node*.log"))
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		for _, line := range strings.Split(string(b), "\n") {
			level := "ERROR"
			if strings.Contains(line, "level=WARN") {
				level = "WARN"
			} else if !strings.Contains(line, "level=ERROR") {
				continue
			}
			_, msg, _ := strings.Cut(line, " msg=")
			msg = level + " " + msg
			if i := strings.Index(msg, " error="); i >= 0 {
				rest := msg[i:]
				if j := strings.Index(msg, " method="); j >= 0 && j < i {
					msg = msg[:j]
				} else {
					msg = msg[:i]
				}
				msg += rest
			}
			msg = hexID.ReplaceAllString(msg, "…")
			out[msg[:min(len(msg), 200)]]++
		}
	}
	return out
}

// hexID is an id in a log line, left out when lines are counted alike.
var hexID = regexp.MustCompile(`[0-9a-f]{24}`)

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// chatSend is one post a chatReceiver took.
type chatSend struct {
	at  time.Time
	pid int // the Herald process that posted it; 0 when it could not be told
}

// chatReceiver is a chat webhook that counts the posts of each content (the
// test renders a trigger's transactionId as the content) and tells which
// Herald process sent each, by the process that owns the connection's
// client socket (Linux /proc). It answers after delay, so a killed
// instance is caught with sends in flight.
type chatReceiver struct {
	*httptest.Server
	delay time.Duration
	pids  func() []int

	mu    sync.Mutex
	sends map[string][]chatSend
	owner map[string]int // client address → pid
}

func newChatReceiver(t *testing.T, delay time.Duration, pids func() []int) *chatReceiver {
	r := &chatReceiver{delay: delay, pids: pids, sends: map[string][]chatSend{}, owner: map[string]int{}}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		pid := r.senderOf(req.RemoteAddr)
		b, _ := io.ReadAll(req.Body)
		var body struct {
			Content string `json:"content"`
		}
		json.Unmarshal(b, &body)
		r.mu.Lock()
		r.sends[body.Content] = append(r.sends[body.Content], chatSend{at: time.Now(), pid: pid})
		r.mu.Unlock()
		select {
		case <-time.After(r.delay):
		case <-req.Context().Done():
		}
		w.WriteHeader(http.StatusOK)
	}))
	// A closed connection's port may be taken next by another process's
	// connection, which must be looked up afresh.
	r.Config.ConnState = func(conn net.Conn, state http.ConnState) {
		if state == http.StateClosed {
			r.mu.Lock()
			delete(r.owner, conn.RemoteAddr().String())
			r.mu.Unlock()
		}
	}
	r.Start()
	t.Cleanup(r.Close)
	return r
}

// received returns a copy of every send, by content.
func (r *chatReceiver) received() map[string][]chatSend {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]chatSend, len(r.sends))
	for k, v := range r.sends {
		out[k] = append([]chatSend(nil), v...)
	}
	return out
}

// distinct is how many of contents have been posted at least once.
func (r *chatReceiver) distinct(contents []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range contents {
		if len(r.sends[c]) > 0 {
			n++
		}
	}
	return n
}

// senderOf finds the process owning the client end of a connection from
// remote, once per connection: the socket's inode from /proc/net/tcp, then
// the process among pids() holding that inode open.
func (r *chatReceiver) senderOf(remote string) int {
	r.mu.Lock()
	pid, ok := r.owner[remote]
	r.mu.Unlock()
	if ok {
		return pid
	}
	pid = socketOwner(remote, r.Listener.Addr().String(), r.pids())
	r.mu.Lock()
	r.owner[remote] = pid
	r.mu.Unlock()
	return pid
}

func socketOwner(client, server string, pids []int) int {
	_, cport, err1 := net.SplitHostPort(client)
	_, sport, err2 := net.SplitHostPort(server)
	if err1 != nil || err2 != nil {
		return 0
	}
	hexPort := func(p string) string {
		n, _ := strconv.Atoi(p)
		return fmt.Sprintf("%04X", n)
	}
	local, remote := ":"+hexPort(cport), ":"+hexPort(sport)
	var inode string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			f := strings.Fields(string(line))
			if len(f) > 9 && strings.HasSuffix(f[1], local) && strings.HasSuffix(f[2], remote) {
				inode = f[9]
				break
			}
		}
		if inode != "" {
			break
		}
	}
	if inode == "" || inode == "0" {
		return 0
	}
	want := "socket:[" + inode + "]"
	for _, pid := range pids {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); link == want {
				return pid
			}
		}
	}
	return 0
}

// waitFor polls cond every 50 ms until it holds or d has passed, and
// reports whether it held.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
