package messaging_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

// socketClient speaks what socket.io-client 4 speaks over its WebSocket
// transport, as @novu/js opens it.
type socketClient struct {
	t    *testing.T
	conn *websocket.Conn
}

// dialSocket opens /socket.io/ with token in the query, reads the
// Engine.IO open packet and sends the namespace CONNECT.
func dialSocket(t *testing.T, srv *apptest.Server, token string) *socketClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/socket.io/?EIO=4&transport=websocket&token=" + token
	conn, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	c := &socketClient{t: t, conn: conn}
	open := c.next()
	if !strings.HasPrefix(open, "0{") {
		t.Fatalf("open packet %q", open)
	}
	var hs struct {
		SID          string   `json:"sid"`
		Upgrades     []string `json:"upgrades"`
		PingInterval int      `json:"pingInterval"`
		PingTimeout  int      `json:"pingTimeout"`
		MaxPayload   int      `json:"maxPayload"`
	}
	if err := json.Unmarshal([]byte(open[1:]), &hs); err != nil || hs.SID == "" || hs.PingInterval != 25000 ||
		hs.PingTimeout != 20000 || hs.MaxPayload != 1000000 || hs.Upgrades == nil {
		t.Fatalf("handshake %s: %v", open, err)
	}
	c.send("40")
	return c
}

func (c *socketClient) send(frame string) {
	c.t.Helper()
	if err := c.conn.Write(context.Background(), websocket.MessageText, []byte(frame)); err != nil {
		c.t.Fatalf("write %q: %v", frame, err)
	}
}

// next returns the next frame; a ping is answered and skipped, as the
// client does.
func (c *socketClient) next() string {
	c.t.Helper()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, b, err := c.conn.Read(ctx)
		cancel()
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		if string(b) == "2" {
			c.send("3")
			continue
		}
		return string(b)
	}
}

// event reads the next EVENT packet and returns its name and payload.
func (c *socketClient) event() (string, map[string]any) {
	c.t.Helper()
	frame := c.next()
	if !strings.HasPrefix(frame, "42") {
		c.t.Fatalf("expected an EVENT packet, got %q", frame)
	}
	var ev []json.RawMessage
	if err := json.Unmarshal([]byte(frame[2:]), &ev); err != nil || len(ev) != 2 {
		c.t.Fatalf("event %q: %v", frame, err)
	}
	var name string
	var payload map[string]any
	json.Unmarshal(ev[0], &name)
	json.Unmarshal(ev[1], &payload)
	return name, payload
}

// events reads n events and returns their names.
func (c *socketClient) events(n int) ([]string, []map[string]any) {
	c.t.Helper()
	var names []string
	var payloads []map[string]any
	for range n {
		name, p := c.event()
		names = append(names, name)
		payloads = append(payloads, p)
	}
	return names, payloads
}

func TestSocket_EventsInOrder(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello {{ payload.n }}")
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	sock := dialSocket(t, srv, c.Token)
	connected := sock.next()
	is.True(strings.HasPrefix(connected, `40{"sid":"`)) // CONNECT answered with a sid

	// A delivery: the message, then both counts.
	apptest.TriggerTo(t, srv, "hello", "ada", `{"n":"1"}`)
	names, p := sock.events(3)
	is.Equal(names, []string{"notification_received", "unseen_count_changed", "unread_count_changed"}) // the reference order
	msg := p[0]["message"].(map[string]any)
	is.Equal(msg["content"], "Hello 1") // the raw message
	is.Equal(msg["read"], false)        // unread
	is.True(msg["_id"] != "")           // with its id
	_, ctaIsObject := msg["cta"].(map[string]any)
	is.True(ctaIsObject)                                                // cta is always an object: the client reads cta.action
	is.Equal(msg["subscriber"].(map[string]any)["subscriberId"], "ada") // its subscriber
	is.Equal(p[1]["unseenCount"], 1.0)                                  // one unseen
	is.Equal(p[2]["unreadCount"], 1.0)                                  // one unread
	counts := p[2]["counts"].(map[string]any)
	is.Equal(counts["total"], 1.0)                             // counts, which the bell reads
	is.Equal(counts["severity"].(map[string]any)["none"], 1.0) // by severity
	id := msg["_id"].(string)

	// Seen through the inbox: the unseen count only.
	status, _, _ := c.Do("POST", "/v1/inbox/notifications/seen", `{"notificationIds":["`+id+`"]}`)
	is.Equal(status, 204)
	name, p0 := sock.event()
	is.Equal(name, "unseen_count_changed") // seen changes the unseen count
	is.Equal(p0["unseenCount"], 0.0)       // to none

	// Read through the inbox: both counts.
	status, _, _ = c.Do("PATCH", "/v1/inbox/notifications/"+id+"/read", "")
	is.Equal(status, 200)
	names, p = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // read
	is.Equal(p[1]["unreadCount"], 0.0)                                        // nothing unread

	// Unread through the server API's mark-as.
	res := srv.Dev.Do(t, "POST", "/v1/subscribers/ada/messages/mark-as", `{"messageId":"`+id+`","markAs":"unread"}`)
	is.Equal(res.Status, 201)
	names, p = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // the server API is heard too
	is.Equal(p[1]["unreadCount"], 1.0)                                        // unread again

	// Archived through the inbox.
	c.Do("PATCH", "/v1/inbox/notifications/"+id+"/archive", "")
	names, p = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // archived
	is.Equal(p[1]["unreadCount"], 0.0)                                        // archiving reads it

	// Deleted through the server API.
	res = srv.Dev.Do(t, "DELETE", "/v1/messages/"+id, "")
	is.Equal(res.Status, 200)
	names, _ = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // deleted

	// Another subscriber's delivery is not heard here.
	apptest.OpenInbox(t, srv, "bob", "")
	apptest.TriggerTo(t, srv, "hello", "bob", `{"n":"2"}`)
	tx := apptest.TriggerTo(t, srv, "hello", "ada", `{"n":"3"}`)
	name, p0 = sock.event()
	is.Equal(name, "notification_received")                        // the next event is ada's own
	is.Equal(p0["message"].(map[string]any)["content"], "Hello 3") // not bob's

	_, p = sock.events(2)
	is.Equal(p[1]["unreadCount"], 1.0) // its counts follow it

	// A transaction's messages deleted through the server API.
	res = srv.Dev.Do(t, "DELETE", "/v1/messages/transaction/"+tx, "")
	is.Equal(res.Status, 204)
	names, p = sock.events(2)
	is.Equal(names, []string{"unseen_count_changed", "unread_count_changed"}) // heard too
	is.Equal(p[1]["unreadCount"], 0.0)                                        // nothing unread left
}

func TestSocket_Refusals(t *testing.T) {
	srv := apptest.NewServer(t)
	c, _ := apptest.OpenInbox(t, srv, "ada", "")
	for _, tc := range []struct{ name, token string }{
		{"no token", ""},
		{"null", "null"},
		{"forged", c.Token[:len(c.Token)-4] + "AAAA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			sock := dialSocket(t, srv, tc.token)
			is.True(strings.HasPrefix(sock.next(), "40{")) // accepted, as the reference platform does
			is.Equal(sock.next(), "41")                    // then disconnected
		})
	}
	t.Run("polling", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.WithKey("").Do(t, "GET", "/socket.io/?EIO=4&transport=polling&token="+c.Token, "")
		is.Equal(res.Status, 400) // only the WebSocket transport, which the client asks for
	})
}
