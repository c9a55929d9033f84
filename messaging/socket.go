package messaging

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-notify/herald/platform"
)

// The inbox client's live updates come over socket.io 4, which is
// Engine.IO 4 framing over a WebSocket. The client opens the WebSocket
// directly (transports: ['websocket']), joins the default namespace and
// only listens, so the server side it needs is small: the Engine.IO open
// packet, heartbeats, the namespace CONNECT answer and EVENT packets.
// That is written here over github.com/coder/websocket instead of taking a
// socket.io server library: the Go ones (googollee/go-socket.io, zishang520
// /socket.io) bring polling, rooms, adapters and their own goroutines per
// socket, none of which this needs, and the protocol test in
// socket_test.go pins the frames the client reads.

// Engine.IO's defaults, which the reference platform keeps; the client
// closes a socket that hears no ping for pingInterval+pingTimeout.
const (
	pingInterval = 25 * time.Second
	pingTimeout  = 20 * time.Second
	maxPayload   = 1000000
	writeTimeout = 10 * time.Second
)

// handleSocket serves GET /socket.io/?EIO=4&transport=websocket&token=…:
// one subscriber's live inbox events (reference B2, B3).
func handleSocket(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		if q.Get("EIO") != "4" || q.Get("transport") != "websocket" {
			return platform.BadRequest("Herald's socket speaks Engine.IO 4 over WebSocket only: EIO=4&transport=websocket")
		}
		// The server's read and write timeouts are for requests; this one
		// lives as long as the page that opened it.
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Time{})
		rc.SetWriteDeadline(time.Time{})
		// Any origin may connect, as to the reference platform: the token,
		// not a cookie, says who the socket is for.
		conn, err := websocket.Accept(smallBuffers{w}, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return nil // Accept has answered the client
		}
		conn.SetReadLimit(maxPayload)
		// The socket is served by a goroutine of its own, and this one
		// returns: the request, the middleware's state and the stack they
		// grew are let go, and an open socket keeps only what it uses.
		go s.sockets().serve(context.Background(), &socket{conn: conn}, q.Get("token"))
		return nil
	})
}

// smallBuffers hands the WebSocket library the hijacked connection with
// small buffers. net/http's are 4 KB each way, sized for requests; an
// inbox socket reads a pong now and then and writes a few small frames,
// and at 10,000 sockets the two buffers were most of what each one held.
type smallBuffers struct{ http.ResponseWriter }

// Hijack takes the connection, keeping what the server's reader had
// already read from it.
func (w smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	var src io.Reader = conn
	if n := brw.Reader.Buffered(); n > 0 {
		read, _ := brw.Reader.Peek(n)
		src = io.MultiReader(bytes.NewReader(bytes.Clone(read)), conn)
	}
	if err := brw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, bufio.NewReadWriter(bufio.NewReaderSize(src, 512), bufio.NewWriterSize(conn, 512)), nil
}

// socket is one client connection. Its handler's goroutine only reads (the
// client's pongs); events and pings are written by the process's few
// fan-out goroutines, so that an open socket costs one goroutine with a
// small stack, not one more that runs the queries behind every event.
type socket struct {
	conn     *websocket.Conn
	who      platform.Subscriber
	wmu      sync.Mutex   // orders writes: the CONNECT answer before any event
	lastPong atomic.Int64 // unix nanoseconds
}

func newSID() string {
	b := make([]byte, 15)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (k *socket) write(ctx context.Context, frame string) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	return k.conn.Write(ctx, websocket.MessageText, []byte(frame))
}

// liveSockets are a process's open sockets, by subscriber, and what feeds
// them: each subscriber with a socket listens on the bus once, its events
// are turned into frames once (whatever its number of sockets) by one of
// a few workers, chosen by subscriber so that its events keep their order,
// and one goroutine pings every socket.
type liveSockets struct {
	store   *Store
	mu      sync.Mutex
	bySub   map[string]*subscriberSockets
	byToken map[string]int // open sockets by token signature (admit)
	shards  []chan liveJob
	// presenceMu orders the online status writes of each subscriber (by
	// shardOf), so the last one written is the state the registry holds.
	presenceMu [liveWorkers]sync.Mutex
}

type subscriberSockets struct {
	who     platform.Subscriber
	sockets map[*socket]struct{}
	cancel  func()
}

type liveJob struct {
	key string
	ev  LiveEvent
}

// liveWorkers is how many goroutines turn events into frames, and
// liveQueue how many events each may hold waiting; past that an event is
// dropped (its counts come with the next one).
const (
	liveWorkers = 8
	liveQueue   = 4096
)

// sockets returns the store's socket registry, starting its workers on first use.
func (s *Store) sockets() *liveSockets {
	s.socketsOnce.Do(func() {
		ls := &liveSockets{store: s, bySub: map[string]*subscriberSockets{}, byToken: map[string]int{}}
		for range liveWorkers {
			q := make(chan liveJob, liveQueue)
			ls.shards = append(ls.shards, q)
			go ls.work(q)
		}
		go ls.ping()
		s.registry.Store(ls)
	})
	return s.registry.Load()
}

// serve runs one socket until the client leaves or stops answering pings,
// or Herald stops.
func (ls *liveSockets) serve(ctx context.Context, k *socket, queryToken string) {
	defer k.conn.CloseNow()
	s := ls.store
	open, _ := json.Marshal(map[string]any{"sid": newSID(), "upgrades": []string{},
		"pingInterval": pingInterval.Milliseconds(), "pingTimeout": pingTimeout.Milliseconds(), "maxPayload": maxPayload})
	if k.write(ctx, "0"+string(open)) != nil {
		return
	}
	// The client's CONNECT to the default namespace, with its auth, if any.
	connectCtx, done := context.WithTimeout(ctx, pingTimeout)
	typ, msg, err := k.conn.Read(connectCtx)
	done()
	if err != nil || typ != websocket.MessageText || !strings.HasPrefix(string(msg), "40") {
		k.conn.Close(websocket.StatusPolicyViolation, "expected a CONNECT packet")
		return
	}
	token := queryToken
	var auth struct {
		Token string `json:"token"`
	}
	if rest := strings.TrimPrefix(string(msg), "40"); rest != "" && json.Unmarshal([]byte(rest), &auth) == nil && auth.Token != "" {
		token = auth.Token
	}
	// As the reference platform: a socket without a good token is
	// accepted and then disconnected, which the client does not retry.
	who, err := s.inbox.Auth.Authenticate(ctx, token)
	if err != nil || s.live == nil {
		k.write(ctx, `40{"sid":"`+newSID()+`"}`)
		k.write(ctx, "41")
		k.conn.Close(websocket.StatusNormalClosure, "unauthorized")
		return
	}
	key, ok := ls.admit(token)
	if !ok {
		k.write(ctx, `44{"message":"Too many sockets are open with this token: at most `+strconv.Itoa(s.inbox.SocketsPerToken)+`"}`)
		k.conn.Close(websocket.StatusPolicyViolation, "too many sockets for this token")
		return
	}
	defer ls.release(key)
	k.who = who
	k.lastPong.Store(time.Now().UnixNano())
	// Listening before the CONNECT is answered, and answering it before
	// any event is written: a client that acts once connected hears
	// about it, in order.
	k.wmu.Lock()
	first := ls.add(k)
	err = k.write(ctx, `40{"sid":"`+newSID()+`"}`)
	k.wmu.Unlock()
	defer ls.remove(k)
	if first {
		ls.presence(ctx, who)
	}
	if err != nil {
		return
	}
	for {
		_, msg, err := k.conn.Read(ctx)
		if err != nil {
			return
		}
		switch string(msg) {
		case "3": // pong
			k.lastPong.Store(time.Now().UnixNano())
		case "41", "1": // DISCONNECT from the namespace; Engine.IO close
			k.conn.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
}

func liveKey(environmentID, subscriberID string) string { return environmentID + "\x00" + subscriberID }

// add registers k, listening on the bus for its subscriber if it is the
// first, and reports whether it is.
func (ls *liveSockets) add(k *socket) (first bool) {
	key := liveKey(k.who.EnvironmentID, k.who.ID)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	subs := ls.bySub[key]
	if subs == nil {
		first = true
		subs = &subscriberSockets{who: k.who, sockets: map[*socket]struct{}{}}
		ls.bySub[key] = subs
		shard := ls.shards[shardOf(key)]
		subs.cancel = ls.store.live.Subscribe(k.who.EnvironmentID, k.who.ID, func(ev LiveEvent) {
			select {
			case shard <- liveJob{key: key, ev: ev}:
			default: // the workers are this far behind: drop it
			}
		})
	}
	subs.sockets[k] = struct{}{}
	return first
}

// remove unregisters k, and stops listening for its subscriber after the
// last, which sets the subscriber offline here.
func (ls *liveSockets) remove(k *socket) {
	if ls.unregister(k) {
		ls.presence(context.Background(), k.who)
	}
}

// unregister removes k, and reports whether it was its subscriber's last.
func (ls *liveSockets) unregister(k *socket) (last bool) {
	key := liveKey(k.who.EnvironmentID, k.who.ID)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	subs := ls.bySub[key]
	if subs == nil {
		return false
	}
	delete(subs.sockets, k)
	if len(subs.sockets) == 0 {
		subs.cancel()
		delete(ls.bySub, key)
		return true
	}
	return false
}

// presence records whether this process holds a socket of who now. A
// first socket opening and a last one closing call it; as the two may race
// (a tab closed while another opens), it writes the registry's state, not
// the event's, one write at a time per subscriber. It outlives the request:
// a socket closed at shutdown still marks its subscriber offline. A
// failure is logged, and the socket goes on: the next open or close, or
// the next start, writes the status again.
func (ls *liveSockets) presence(ctx context.Context, who platform.Subscriber) {
	p := ls.store.inbox.Presence
	if p == nil {
		return
	}
	key := liveKey(who.EnvironmentID, who.ID)
	mu := &ls.presenceMu[shardOf(key)]
	mu.Lock()
	defer mu.Unlock()
	ls.mu.Lock()
	_, open := ls.bySub[key]
	ls.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), presenceTimeout)
	defer cancel()
	write := p.SocketsClosed
	if open {
		write = p.SocketsOpened
	}
	if err := write(ctx, who.EnvironmentID, who.ID); err != nil {
		ls.store.inbox.Logger.Warn("online status not written", "environment_id", who.EnvironmentID, "error", err)
	}
}

// presenceTimeout bounds one online status write.
const presenceTimeout = 5 * time.Second

func shardOf(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % liveWorkers)
}

// targets returns the subscriber's sockets now, by the inbox each shows
// (its session's context), and who the subscriber is.
func (ls *liveSockets) targets(key string) (platform.Subscriber, map[inboxScope][]*socket) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	subs := ls.bySub[key]
	if subs == nil {
		return platform.Subscriber{}, nil
	}
	out := map[inboxScope][]*socket{}
	for k := range subs.sockets {
		box := scopeOf(k.who)
		out[box] = append(out[box], k)
	}
	return subs.who, out
}

// work turns each event of its shard into frames, once for each inbox
// (context) the subscriber's sockets show, and writes them to each socket
// whose token is still good.
func (ls *liveSockets) work(q chan liveJob) {
	ctx := context.Background()
	for job := range q {
		who, targets := ls.targets(job.key)
		if len(targets) == 0 {
			continue
		}
		generation, err := ls.store.inbox.Auth.TokenGeneration(ctx, who.EnvironmentID)
		if err != nil {
			continue // as a failed read of the frames: the client reads again on its next action
		}
		for box, sockets := range targets {
			frames := ls.store.liveFrames(ctx, sockets[0].who, box, job.ev)
			for _, k := range sockets {
				if k.who.Generation != generation {
					ls.revoked(ctx, k)
					continue
				}
				ls.writeFrames(ctx, k, frames)
			}
		}
	}
}

// writeFrames writes frames to k in order, closing it when one fails.
func (ls *liveSockets) writeFrames(ctx context.Context, k *socket, frames []string) {
	k.wmu.Lock()
	defer k.wmu.Unlock()
	for _, f := range frames {
		if k.write(ctx, f) != nil {
			k.conn.CloseNow() // its reader sees the close and unregisters it
			return
		}
	}
}

// ping writes Engine.IO's ping to every socket each pingInterval, closes
// those that did not answer the last ones in time, and closes them all
// when Herald stops.
func (ls *liveSockets) ping() {
	var closing <-chan struct{}
	if ls.store.inbox != nil {
		closing = ls.store.inbox.Closing
	}
	tick := time.NewTicker(pingInterval)
	defer tick.Stop()
	for {
		select {
		case <-closing:
			for _, k := range ls.all() {
				k.conn.Close(websocket.StatusGoingAway, "server stopping")
			}
			return
		case <-tick.C:
		}
		ctx := context.Background()
		for _, k := range ls.all() {
			if time.Since(time.Unix(0, k.lastPong.Load())) > pingInterval+pingTimeout {
				k.conn.CloseNow()
				continue
			}
			k.wmu.Lock()
			if k.write(ctx, "2") != nil {
				k.conn.CloseNow()
			}
			k.wmu.Unlock()
		}
	}
}

func (ls *liveSockets) all() []*socket {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []*socket
	for _, subs := range ls.bySub {
		for k := range subs.sockets {
			out = append(out, k)
		}
	}
	return out
}

// liveFrames are the socket.io EVENT packets ev brings a socket of who
// showing the inbox box, with counts and message read now (reference B3):
// a message received brings it and both counts; a change, both counts; a
// seen, the unseen count. A message received in another context brings
// nothing. A failed read drops the event's frames: the client reads the
// counts again on its next action or load.
func (s *Store) liveFrames(ctx context.Context, who platform.Subscriber, box inboxScope, ev LiveEvent) []string {
	var frames []string
	add := func(name string, payload any) {
		b, err := json.Marshal([]any{name, payload})
		if err == nil {
			frames = append(frames, "42"+string(b))
		}
	}
	env := who.EnvironmentID
	if ev.Kind == LiveReceived {
		m, err := scanInboxMessage(s.db.QueryRow(ctx, `SELECT `+inboxColumns+` FROM messages
			WHERE environment_id = ? AND subscriber_id = ? AND id = ? AND context_keys = ?`, env, who.ID, ev.MessageID, box.context))
		if err != nil {
			return nil
		}
		wf := s.liveWorkflow(ctx, env, m.TemplateID)
		to := inboxTo{ID: who.ID, SubscriberID: who.SubscriberID, FirstName: who.FirstName, LastName: who.LastName}
		add("notification_received", map[string]any{"message": toLiveMessage(m, to, wf)})
	}
	sev, err := s.severities(ctx, env)
	if err != nil {
		return frames
	}
	c, err := s.liveCounts(ctx, box, sev)
	if err != nil {
		return frames
	}
	add("unseen_count_changed", map[string]any{"unseenCount": min(c.unseen, inboxCountLimit), "hasMore": c.unseen > inboxCountLimit})
	if ev.Kind == LiveSeen {
		return frames
	}
	counts := severityCounts{Total: min(c.unread, inboxCountLimit+1), Severity: map[string]int{}}
	for level, n := range c.bySeverity {
		counts.Severity[level] = min(n, inboxCountLimit)
	}
	add("unread_count_changed", map[string]any{"unreadCount": min(c.unread, inboxCountLimit),
		"counts": counts, "hasMore": c.unread > inboxCountLimit})
	return frames
}

// liveCount is what the count events of one subscriber say.
type liveCount struct {
	unseen, unread int
	bySeverity     map[string]int // unread and not snoozed, by the workflow's severity
}

// liveCounts reads every count the events carry in one query over the
// scope's unseen or unread in-app messages (reference B3: the unread
// total includes snoozed messages, its severity counts do not). Unlike the
// inbox's count route it does not stop at 100: an event is sent for each
// change, and one read was cheaper than the three capped ones it replaced.
func (s *Store) liveCounts(ctx context.Context, box inboxScope, sev map[string]string) (liveCount, error) {
	out := liveCount{bySeverity: map[string]int{"high": 0, "medium": 0, "low": 0, "none": 0}}
	rows, err := s.db.Query(ctx, `SELECT template_id, count(*) FILTER (WHERE seen = 0),
		count(*) FILTER (WHERE read = 0), count(*) FILTER (WHERE read = 0 AND snoozed_until IS NULL)
		FROM messages WHERE environment_id = ? AND subscriber_id = ? AND channel = 'in_app' AND context_keys = ?
		AND (seen = 0 OR read = 0)
		GROUP BY template_id`, box.env, box.subscriberID, box.context)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var tpl string
		var unseen, unread, awake int
		if err := rows.Scan(&tpl, &unseen, &unread, &awake); err != nil {
			return out, err
		}
		out.unseen += unseen
		out.unread += unread
		level := sev[tpl]
		if level == "" {
			level = "none"
		}
		out.bySeverity[level] += awake
	}
	return out, rows.Err()
}

// openSockets is how many live inbox sockets this process holds, for the
// herald_inbox_sockets gauge. A scrape before the first socket starts no
// socket workers: there is nothing to count.
func (s *Store) openSockets() float64 {
	ls := s.registry.Load()
	if ls == nil {
		return 0
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	n := 0
	for _, subs := range ls.bySub {
		n += len(subs.sockets)
	}
	return float64(n)
}
