package activity_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app"
	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// The files the attachment tests send: a PDF offered for download and a
// PNG the email's HTML shows by its Content-ID, both with bytes no text
// encoding would keep.
var (
	invoicePDF = "%PDF-1.4\n\x00\xff\xfe invoice 42\n%%EOF"
	logoPNG    = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR logo"
	b64        = base64.StdEncoding.EncodeToString
)

// twoFiles is payload.attachments with both files.
var twoFiles = `[{"file":"` + b64([]byte(invoicePDF)) + `","mime":"application/pdf","name":"invoice.pdf"},
	{"file":"` + b64([]byte(logoPNG)) + `","mime":"image/png","name":"logo.png","cid":"logo"}]`

// mailWorkflow creates "invoice": one email step whose HTML shows the logo.
func mailWorkflow(t *testing.T, srv *apptest.Server) {
	t.Helper()
	apptest.MustCreate(t, srv.Dev, "/v2/workflows", `{"name":"Invoice","workflowId":"invoice","active":true,"steps":[
		{"name":"Mail","type":"email","controlValues":{"subject":"Your invoice","body":"<p>Hi {{ payload.name }}</p><img src=\"cid:logo\">"}}]}`)
	apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"ada","email":"ada@example.com"}`)
}

// mailPart is one leaf part of a received mail.
type mailPart struct {
	header  map[string]string
	content string
}

// mailParts reads every leaf part of a mail, nested multiparts walked,
// each part's body decoded from its transfer encoding.
func mailParts(t *testing.T, raw []byte) []mailPart {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("mail: %v", err)
	}
	var out []mailPart
	var walk func(ctype string, header func(string) string, body io.Reader)
	walk = func(ctype string, header func(string) string, body io.Reader) {
		mt, params, _ := mime.ParseMediaType(ctype)
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(body, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err != nil {
					return
				}
				walk(p.Header.Get("Content-Type"), p.Header.Get, p)
			}
		}
		b, _ := io.ReadAll(body)
		if strings.EqualFold(header("Content-Transfer-Encoding"), "base64") {
			b, _ = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(b)), ""))
		}
		out = append(out, mailPart{content: string(b), header: map[string]string{"type": mt,
			"disposition": header("Content-Disposition"), "id": header("Content-Id")}})
	}
	walk(msg.Header.Get("Content-Type"), msg.Header.Get, msg.Body)
	return out
}

// TestTrigger_AttachmentsReachTheMailbox triggers an email with two files
// and finds both, byte for byte, in the mail a real SMTP server received:
// the PDF as an attachment, the PNG inline under its Content-ID. The
// payload that the notification and its message show has no trace of them.
func TestTrigger_AttachmentsReachTheMailbox(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	box := apptest.NewMailbox(t)
	box.UseFor(t, srv.Dev)
	mailWorkflow(t, srv)
	tx := apptest.Trigger(t, srv, `{"name":"invoice","to":"ada","payload":{"name":"Ada","attachments":`+twoFiles+`,"order":7}}`)

	byType := map[string]mailPart{}
	for _, p := range mailParts(t, box.Wait(t, 1)) {
		byType[p.header["type"]] = p
	}
	pdf, png := byType["application/pdf"], byType["image/png"]
	is.Equal(pdf.content, invoicePDF)                                   // the PDF arrived intact
	is.True(strings.HasPrefix(pdf.header["disposition"], "attachment")) // offered as a download
	is.True(strings.Contains(pdf.header["disposition"], "invoice.pdf")) // under its name
	is.Equal(png.content, logoPNG)                                      // the PNG arrived intact
	is.Equal(png.header["id"], "<logo>")                                // inline under the Content-ID the HTML names
	is.True(strings.HasPrefix(png.header["disposition"], "inline"))     // shown in the body
	is.True(strings.Contains(byType["text/html"].content, "Hi Ada"))    // the body rendered from the rest of the payload

	apptest.WaitJobs(t, srv, tx, "trigger:completed", "email:completed")
	for _, path := range []string{"/v1/notifications?transactionId=" + tx, "/v1/messages?channel=email"} {
		body := string(srv.Dev.Do(t, "GET", path, "").Body)
		is.True(strings.Contains(body, `"order":7`))           // the payload is shown
		is.True(!strings.Contains(body, "attachments"))        // without the files
		is.True(!strings.Contains(body, b64([]byte(logoPNG)))) // nor their content
	}
}

// countRows counts what a trigger writes: notifications, jobs, stored
// values and subscribers.
func countRows(t *testing.T, srv *apptest.Server) (n int) {
	t.Helper()
	for _, table := range []string{"notifications", "jobs", "stored_values", "subscribers", "activity_transactions"} {
		var c int
		if err := srv.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&c); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		n += c
	}
	return n
}

// TestTrigger_AttachmentsRefused sends files no email could carry, to each
// trigger route, and checks each is a 422 naming the file's field that
// stores nothing.
func TestTrigger_AttachmentsRefused(t *testing.T) {
	srv := apptest.NewServer(t, apptest.MaxAttachments(4096), apptest.Outbound(nil))
	mailWorkflow(t, srv)
	big := `{"file":"` + b64([]byte(strings.Repeat("x", 3000))) + `","mime":"text/plain"}`
	private := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	t.Cleanup(private.Close)
	for _, tc := range []struct {
		name, files, field string
	}{
		{"ErrOverTheLimit", `[` + big + `,` + big + `]`, "payload.attachments"},
		{"ErrBadBase64", `[{"file":"not base64!","mime":"text/plain"}]`, "payload.attachments.0.file"},
		{"ErrNoMime", `[{"file":"aGk=","name":"a.txt"}]`, "payload.attachments.0.mime"},
		{"ErrNoFile", `[{"mime":"text/plain"}]`, "payload.attachments.0.file"},
		{"ErrBadURL", `[{"url":"ftp://example.com/a.pdf"}]`, "payload.attachments.0.url"},
		{"ErrPrivateURL", `[{"url":"` + private.URL + `/a.txt"}]`, "payload.attachments.0.url"},
		{"ErrUnknownChannel", `[{"file":"aGk=","mime":"text/plain","channels":["fax"]}]`, "payload.attachments.0.channels"},
		{"ErrNotAList", `{"file":"aGk="}`, "payload.attachments"},
	} {
		for _, route := range []string{"/v1/events/trigger", "/v1/events/trigger/broadcast", "/v1/events/trigger/bulk"} {
			t.Run(tc.name+route, func(t *testing.T) {
				is := is.New(t)
				event := `{"name":"invoice","to":["ada","new-subscriber"],"payload":{"name":"Ada","attachments":` + tc.files + `}}`
				body, field := event, tc.field
				switch route {
				case "/v1/events/trigger/bulk":
					body, field = `{"events":[`+event+`]}`, "events.0."+tc.field
				case "/v1/events/trigger/broadcast":
					body = `{"name":"invoice","payload":{"attachments":` + tc.files + `}}`
				}
				before := countRows(t, srv)
				res := srv.Dev.Do(t, "POST", route, body)
				if tc.name == "ErrPrivateURL" && route == "/v1/events/trigger/bulk" {
					// Fetched as the event is accepted: its own answer
					// refuses it, as any event's client error.
					is.Equal(res.Status, 201) // the request is answered
					var out []struct {
						Status string   `json:"status"`
						Error  []string `json:"error"`
					}
					res.Decode(t, &out)
					is.Equal(out[0].Status, "error")                                                    // the event is refused
					is.True(strings.Contains(strings.Join(out[0].Error, " "), "HERALD_OUTBOUND_ALLOW")) // saying why
					is.Equal(countRows(t, srv), before)                                                 // nothing stored
					return
				}
				is.Equal(res.Status, 422) // refused
				var e struct {
					Errors map[string]struct {
						Messages []string `json:"messages"`
					} `json:"errors"`
				}
				res.Decode(t, &e)
				if _, ok := e.Errors[field]; !ok && tc.name == "ErrOverTheLimit" && route == "/v1/events/trigger/bulk" {
					_, ok = e.Errors["events"] // the events' files together
					is.True(ok)                // the limit is named
				} else {
					is.True(ok) // the field is named
				}
				is.Equal(countRows(t, srv), before) // nothing stored
			})
		}
	}
}

// TestTrigger_AttachmentByURL fetches a file given by URL while the
// trigger is answered, through the outbound guard, which lets the test's
// loopback server through here, and sends it to the provider in its
// documented shape, with its name and type from the answer.
func TestTrigger_AttachmentByURL(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		io.WriteString(w, invoicePDF)
	}))
	t.Cleanup(files.Close)
	var mu sync.Mutex
	var got []map[string]any
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"email-webhook","channel":"email","active":true,"primary":true,
		"credentials":{"webhookUrl":"`+hook.URL+`"}}`)
	mailWorkflow(t, srv)
	tx := apptest.Trigger(t, srv, `{"name":"invoice","to":"ada","payload":{"attachments":[{"url":"`+files.URL+`/bills/march.pdf"}]}}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "email:completed")
	mu.Lock()
	defer mu.Unlock()
	is.Equal(len(got), 1) // one email sent
	list, _ := got[0]["attachments"].([]any)
	is.Equal(len(list), 1) // with the file
	file := list[0].(map[string]any)
	is.Equal(file["content"], b64([]byte(invoicePDF))) // fetched whole
	is.Equal(file["mime"], "application/pdf")          // typed as the server answered
	is.Equal(file["name"], "march.pdf")                // named after the URL's path
}

// TestTrigger_AttachmentsWithoutProviderSupport sends through a provider
// that cannot carry files: the email goes without them, and the step's
// details say so.
func TestTrigger_AttachmentsWithoutProviderSupport(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	plunk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"success":true,"emails":[{"contact":{"id":"c-1"}}]}`)
	}))
	t.Cleanup(plunk.Close)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"plunk","channel":"email","active":true,"primary":true,
		"credentials":{"apiKey":"key","from":"noreply@acme.test","baseUrl":"`+plunk.URL+`"}}`)
	mailWorkflow(t, srv)
	tx := apptest.Trigger(t, srv, `{"name":"invoice","to":"ada","payload":{"attachments":`+twoFiles+`}}`)
	n := apptest.WaitJobs(t, srv, tx, "trigger:completed", "email:completed")
	warned := false
	for _, d := range n.Jobs[1].ExecutionDetails {
		warned = warned || d.Status == "Warning" && strings.Contains(d.Detail, "does not send attachments")
	}
	is.True(warned) // the details say the files were left out
}

// TestTrigger_AttachmentsStoredOnceAndSwept broadcasts two files to
// several subscribers: they are stored once, named by every notification,
// and go when retention removes the notifications.
func TestTrigger_AttachmentsStoredOnceAndSwept(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t, apptest.Retention(app.Retention{Activity: time.Hour, InApp: time.Hour, Messages: time.Hour}))
	hook := apptest.NewChatHook(t, http.StatusOK)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"email-webhook","channel":"email","active":true,"primary":true,
		"credentials":{"webhookUrl":"`+hook.URL+`"}}`)
	mailWorkflow(t, srv)
	for _, id := range []string{"bob", "cy", "dee"} {
		apptest.MustCreate(t, srv.Dev, "/v1/subscribers", `{"subscriberId":"`+id+`","email":"`+id+`@example.com"}`)
	}
	large := `[{"file":"` + b64([]byte(strings.Repeat(invoicePDF, 200))) + `","mime":"application/pdf","name":"big.pdf"}]`
	res := srv.Dev.Do(t, "POST", "/v1/events/trigger/broadcast", `{"name":"invoice","payload":{"attachments":`+large+`}}`)
	is.Equal(res.Status, 200) // broadcast accepted
	db := srv.App.DB
	var named, keys, stored int
	is.NoErr(db.QueryRowContext(t.Context(), `SELECT count(*), count(DISTINCT attachments) FROM notifications WHERE attachments LIKE '@%'`).Scan(&named, &keys))
	is.Equal(named, 4) // every notification names the files
	is.Equal(keys, 1)  // the same stored copy
	is.NoErr(db.QueryRowContext(t.Context(), `SELECT count(*) FROM stored_values`).Scan(&stored))
	is.Equal(stored, 1) // stored once

	platformtest.Eventually(t, 10*time.Second, func() bool { return len(hook.Received()) == 4 }, "every email sent")
	srv.App.Clock.Advance(3 * time.Hour)
	platformtest.Eventually(t, 10*time.Second, func() bool {
		srv.Herald.Sweeper.Sweep(t.Context())
		db.QueryRowContext(t.Context(), `SELECT count(*) FROM stored_values`).Scan(&stored)
		return stored == 0
	}, "the files to go with their notifications")
}

// TestTrigger_AttachmentsPastTheBodyLimit sends a file larger than the
// request body and payload limits allow a trigger without files, to a
// topic: the files have a limit of their own, and its members' emails
// carry the file whole.
func TestTrigger_AttachmentsPastTheBodyLimit(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	hook := apptest.NewChatHook(t, http.StatusOK)
	apptest.MustCreate(t, srv.Dev, "/v1/integrations", `{"providerId":"email-webhook","channel":"email","active":true,"primary":true,
		"credentials":{"webhookUrl":"`+hook.URL+`"}}`)
	mailWorkflow(t, srv)
	apptest.MustCreate(t, srv.Dev, "/v1/topics", `{"key":"billing","name":"Billing"}`)
	apptest.MustStatus(t, srv.Dev, "POST", "/v1/topics/billing/subscribers", `{"subscribers":["ada"]}`, 200)
	content := strings.Repeat(invoicePDF, (2<<20)/len(invoicePDF)) // 2 MB: twice the body limit, four times the payload's
	apptest.Trigger(t, srv, `{"name":"invoice","to":[{"type":"Topic","topicKey":"billing"}],
		"payload":{"attachments":[{"file":"`+b64([]byte(content))+`","mime":"application/pdf","name":"year.pdf"}]}}`)
	platformtest.Eventually(t, 10*time.Second, func() bool { return len(hook.Received()) == 1 }, "the email sent")
	files, _ := hook.Received()[0]["attachments"].([]any)
	is.Equal(len(files), 1)                                                                            // the file went with it
	is.Equal(files[0].(map[string]any)["content"], b64([]byte(content)))                               // whole
	is.True(!strings.Contains(string(srv.Dev.Do(t, "GET", "/v1/notifications", "").Body), "year.pdf")) // and no view shows it
}
