package messaging

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/workflows"
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
		conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return nil // Accept has answered the client
		}
		conn.SetReadLimit(maxPayload)
		sock := &socket{store: s, conn: conn, queryToken: q.Get("token")}
		sock.serve(context.WithoutCancel(r.Context()))
		return nil
	})
}

// socket is one client connection.
type socket struct {
	store      *Store
	conn       *websocket.Conn
	queryToken string
	lastPong   atomic.Int64 // unix nanoseconds
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

// serve runs the socket until the client leaves, stops answering pings,
// or Herald stops.
func (k *socket) serve(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer k.conn.CloseNow()
	var closing <-chan struct{}
	if k.store.inbox != nil {
		closing = k.store.inbox.Closing
	}

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
	token := k.queryToken
	var auth struct {
		Token string `json:"token"`
	}
	if rest := strings.TrimPrefix(string(msg), "40"); rest != "" && json.Unmarshal([]byte(rest), &auth) == nil && auth.Token != "" {
		token = auth.Token
	}
	// As the reference platform: a socket without a good token is
	// accepted and then disconnected, which the client does not retry.
	who, err := k.store.inbox.Auth.Authenticate(ctx, token)
	if err != nil || k.store.live == nil {
		k.write(ctx, `40{"sid":"`+newSID()+`"}`)
		k.write(ctx, "41")
		k.conn.Close(websocket.StatusNormalClosure, "unauthorized")
		return
	}
	// Listening before the CONNECT is answered: a client that acts once
	// connected hears about it.
	events, unsubscribe := k.store.live.Subscribe(who.EnvironmentID, who.ID)
	defer unsubscribe()
	if k.write(ctx, `40{"sid":"`+newSID()+`"}`) != nil {
		return
	}

	go k.read(ctx, cancel)
	k.lastPong.Store(time.Now().UnixNano())
	ping := time.NewTicker(pingInterval)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-closing:
			k.conn.Close(websocket.StatusGoingAway, "server stopping")
			return
		case <-ping.C:
			if time.Since(time.Unix(0, k.lastPong.Load())) > pingInterval+pingTimeout {
				k.conn.Close(websocket.StatusPolicyViolation, "ping timeout")
				return
			}
			if k.write(ctx, "2") != nil {
				return
			}
		case ev := <-events:
			for _, frame := range k.store.liveFrames(ctx, who, ev) {
				if k.write(ctx, frame) != nil {
					return
				}
			}
		}
	}
}

// read takes the client's packets: pongs, and a disconnect or close.
func (k *socket) read(ctx context.Context, stop context.CancelFunc) {
	defer stop()
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

// liveFrames are the socket.io EVENT packets ev brings a socket of who,
// with counts and message read now (reference B3): a message received
// brings it and both counts; a change, both counts; a seen, the unseen
// count. A failed read drops the event's frames: the client reads the
// counts again on its next action or load.
func (s *Store) liveFrames(ctx context.Context, who platform.Subscriber, ev LiveEvent) []string {
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
			WHERE environment_id = ? AND subscriber_id = ? AND id = ?`, env, who.ID, ev.MessageID))
		if err != nil {
			return nil
		}
		var wf *workflows.InboxWorkflow
		if m.TemplateID != "" && s.inbox.Workflows != nil {
			wfs, err := s.inbox.Workflows.InboxWorkflows(ctx, env, []string{m.TemplateID})
			if err == nil {
				if w, ok := wfs[m.TemplateID]; ok {
					wf = &w
				}
			}
		}
		to := inboxTo{ID: who.ID, SubscriberID: who.SubscriberID, FirstName: who.FirstName, LastName: who.LastName}
		add("notification_received", map[string]any{"message": toLiveMessage(m, to, wf)})
	}
	f := false
	unseen, err := s.inboxCount(ctx, env, who.ID, &inboxFilter{seen: &f}, nil, inboxCountLimit+1)
	if err != nil {
		return frames
	}
	add("unseen_count_changed", map[string]any{"unseenCount": min(unseen, inboxCountLimit), "hasMore": unseen > inboxCountLimit})
	if ev.Kind == LiveSeen {
		return frames
	}
	unread, err := s.inboxCount(ctx, env, who.ID, &inboxFilter{read: &f}, nil, inboxCountLimit+1)
	if err != nil {
		return frames
	}
	var sev map[string]string
	if s.inbox.Workflows != nil {
		if sev, err = s.inbox.Workflows.WorkflowSeverities(ctx, env); err != nil {
			return frames
		}
	}
	counts, err := s.unreadBySeverity(ctx, env, who.ID, sev)
	if err != nil {
		return frames
	}
	counts.Total = unread
	add("unread_count_changed", map[string]any{"unreadCount": min(unread, inboxCountLimit),
		"counts": counts, "hasMore": unread > inboxCountLimit})
	return frames
}
