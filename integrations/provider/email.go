package provider

import (
	"bytes"
	"cmp"
	"context"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
)

// emailProviders are the email APIs of the "Provider ids" section of
// docs/api.md (docs/providers.md, "Email"). Each sends from the override's
// from and sender name, else the credentials'.
var emailProviders = map[string]spec{
	"sendgrid": {channel: "email", required: []string{"apiKey", "from"}, id: "header:X-Message-Id",
		send: func(c Credentials, m Message) (*call, error) {
			p := map[string]any{"to": emailObjects(m.To)}
			copies(p, m, "cc", "bcc", "email")
			body := map[string]any{"personalizations": []any{p}, "from": nameAddr(c, m, "email", "name"), "subject": m.Subject,
				"content":     textAndHTML(m, "type", "value", "text/plain", "text/html"),
				"custom_args": map[string]string{"heraldMessageId": m.ID}}
			if m.ReplyTo != "" {
				body["reply_to"] = map[string]string{"email": m.ReplyTo}
			}
			if pool := val(c.IPPoolName); pool != "" {
				body["ip_pool_name"] = pool
			}
			return &call{url: origin(c, "https://api.sendgrid.com") + "/v3/mail/send", header: bearer(val(c.APIKey)), json: body}, nil
		}, check: checkCall(func(c Credentials) *call {
			return &call{url: origin(c, "https://api.sendgrid.com") + "/v3/scopes", header: bearer(val(c.APIKey))}
		})},
	"ses": {channel: "email", files: true, required: []string{"apiKey", "secretKey", "region", "from"}, id: "MessageId", build: func(c Credentials, d Deps) (Sender, error) {
		return &httpSender{creds: c, deps: d, s: spec{id: "MessageId", send: func(c Credentials, m Message) (*call, error) {
			dest := map[string]any{"ToAddresses": []string{m.To}}
			if len(m.Cc) > 0 {
				dest["CcAddresses"] = m.Cc
			}
			if len(m.Bcc) > 0 {
				dest["BccAddresses"] = m.Bcc
			}
			simple := map[string]any{"Subject": map[string]string{"Data": m.Subject},
				"Body": map[string]any{"Html": map[string]string{"Data": m.HTML}, "Text": map[string]string{"Data": m.Text}}}
			if len(m.Attachments) > 0 {
				simple["Attachments"] = sesAttachments(m.Attachments)
			}
			body := map[string]any{"FromEmailAddress": fromHeader(c, m), "Destination": dest, "Content": map[string]any{"Simple": simple}}
			if m.ReplyTo != "" {
				body["ReplyToAddresses"] = []string{m.ReplyTo}
			}
			return &call{url: sesOrigin(c) + "/v2/email/outbound-emails", json: body, sign: sigV4(c, "ses", d)}, nil
		}}}, nil
	}, check: func(ctx context.Context, c Credentials, d Deps) error {
		_, err := do(ctx, d.Client, &call{method: http.MethodGet, url: sesOrigin(c) + "/v2/email/account", sign: sigV4(c, "ses", d)})
		return err
	}},
	"postmark": {channel: "email", required: []string{"apiKey", "from"}, id: "MessageID", send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"From": fromHeader(c, m), "To": m.To, "Subject": m.Subject, "HtmlBody": m.HTML, "TextBody": m.Text,
			"Metadata": map[string]string{"heraldMessageId": m.ID}}
		if len(m.Cc) > 0 {
			body["Cc"] = strings.Join(m.Cc, ",")
		}
		if len(m.Bcc) > 0 {
			body["Bcc"] = strings.Join(m.Bcc, ",")
		}
		if m.ReplyTo != "" {
			body["ReplyTo"] = m.ReplyTo
		}
		return &call{url: origin(c, "https://api.postmarkapp.com") + "/email", header: map[string]string{"X-Postmark-Server-Token": val(c.APIKey)}, json: body}, nil
	}, failed: func(r *reply, _ Message) error {
		if code := pick(r.doc, "ErrorCode"); code != "" && code != "0" {
			return &Error{Msg: "provider refused: " + pick(r.doc, "Message")}
		}
		return nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://api.postmarkapp.com") + "/server", header: map[string]string{"X-Postmark-Server-Token": val(c.APIKey)}}
	})},
	"resend": {channel: "email", required: []string{"apiKey", "from"}, id: "id", send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"from": fromHeader(c, m), "to": []string{m.To}, "subject": m.Subject, "html": m.HTML, "text": m.Text}
		addCopies(body, m, "cc", "bcc", "reply_to")
		h := bearer(val(c.APIKey))
		h["Idempotency-Key"] = m.ID // a retried job sends once (docs/providers.md, "Rules that hold for every provider")
		return &call{url: origin(c, "https://api.resend.com") + "/emails", header: h, json: body}, nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://api.resend.com") + "/domains", header: bearer(val(c.APIKey))}
	})},
	"mailgun": {channel: "email", files: true, required: []string{"apiKey", "domain", "from"}, id: "id", send: func(c Credentials, m Message) (*call, error) {
		fields := [][2]string{{"from", fromHeader(c, m)}, {"to", m.To}, {"subject", m.Subject}, {"html", m.HTML}, {"text", m.Text},
			{"v:heraldMessageId", m.ID}}
		if len(m.Cc) > 0 {
			fields = append(fields, [2]string{"cc", strings.Join(m.Cc, ",")})
		}
		if len(m.Bcc) > 0 {
			fields = append(fields, [2]string{"bcc", strings.Join(m.Bcc, ",")})
		}
		if m.ReplyTo != "" {
			fields = append(fields, [2]string{"h:Reply-To", m.ReplyTo})
		}
		body, ctype := multipartBody(fields, formFiles(m.Attachments, "inline", "attachment")...)
		return &call{url: origin(c, "https://api.mailgun.net") + "/v3/" + val(c.Domain) + "/messages", body: body, contentType: ctype,
			user: cmp.Or(val(c.User), "api"), pass: val(c.APIKey)}, nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://api.mailgun.net") + "/v3/domains/" + val(c.Domain), user: cmp.Or(val(c.User), "api"), pass: val(c.APIKey)}
	})},
	"mailjet": {channel: "email", required: []string{"apiKey", "secretKey", "from"}, id: "Messages.0.To.0.MessageID", send: func(c Credentials, m Message) (*call, error) {
		msg := map[string]any{"From": nameAddr(c, m, "Email", "Name"), "To": []any{map[string]string{"Email": m.To}},
			"Subject": m.Subject, "HTMLPart": m.HTML, "TextPart": m.Text, "CustomID": m.ID}
		copies(msg, m, "Cc", "Bcc", "Email")
		if m.ReplyTo != "" {
			msg["ReplyTo"] = map[string]string{"Email": m.ReplyTo}
		}
		return &call{url: origin(c, "https://api.mailjet.com") + "/v3.1/send", user: val(c.APIKey), pass: val(c.SecretKey),
			json: map[string]any{"Messages": []any{msg}}}, nil
	}, failed: func(r *reply, _ Message) error {
		if pick(r.doc, "Messages.0.Status") == "error" {
			return &Error{Msg: "provider refused: " + pick(r.doc, "Messages.0.Errors.0.ErrorMessage")}
		}
		return nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://api.mailjet.com") + "/v3/REST/apikey", user: val(c.APIKey), pass: val(c.SecretKey)}
	})},
	"sendinblue": {channel: "email", required: []string{"apiKey", "from"}, id: "messageId", send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"sender": nameAddr(c, m, "email", "name"), "to": emailObjects(m.To), "subject": m.Subject,
			"htmlContent": m.HTML, "textContent": m.Text}
		copies(body, m, "cc", "bcc", "email")
		if m.ReplyTo != "" {
			body["replyTo"] = map[string]string{"email": m.ReplyTo}
		}
		return &call{url: origin(c, "https://api.brevo.com") + "/v3/smtp/email", header: map[string]string{"api-key": val(c.APIKey)}, json: body}, nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://api.brevo.com") + "/v3/account", header: map[string]string{"api-key": val(c.APIKey)}}
	})},
	"sparkpost": {channel: "email", required: []string{"apiKey", "from"}, id: "results.id", send: func(c Credentials, m Message) (*call, error) {
		recipients := []any{map[string]any{"address": map[string]string{"email": m.To}}}
		for _, cc := range append(append([]string{}, m.Cc...), m.Bcc...) {
			recipients = append(recipients, map[string]any{"address": map[string]string{"email": cc, "header_to": m.To}})
		}
		content := map[string]any{"from": nameAddr(c, m, "email", "name"), "subject": m.Subject, "html": m.HTML, "text": m.Text}
		if len(m.Cc) > 0 {
			content["headers"] = map[string]string{"CC": strings.Join(m.Cc, ",")}
		}
		if m.ReplyTo != "" {
			content["reply_to"] = m.ReplyTo
		}
		return &call{url: sparkpostOrigin(c) + "/api/v1/transmissions", header: map[string]string{"Authorization": val(c.APIKey)},
			json: map[string]any{"recipients": recipients, "content": content, "metadata": map[string]string{"heraldMessageId": m.ID}}}, nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: sparkpostOrigin(c) + "/api/v1/account", header: map[string]string{"Authorization": val(c.APIKey)}}
	})},
	"mailersend": {channel: "email", required: []string{"apiKey", "from"}, id: "header:X-Message-Id", send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"from": nameAddr(c, m, "email", "name"), "to": emailObjects(m.To), "subject": m.Subject, "html": m.HTML, "text": m.Text}
		copies(body, m, "cc", "bcc", "email")
		if m.ReplyTo != "" {
			body["reply_to"] = map[string]string{"email": m.ReplyTo}
		}
		return &call{url: origin(c, "https://api.mailersend.com") + "/v1/email", header: bearer(val(c.APIKey)), json: body}, nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://api.mailersend.com") + "/v1/domains", header: bearer(val(c.APIKey))}
	})},
	"mandrill": {channel: "email", required: []string{"apiKey", "from"}, id: "0._id", send: func(c Credentials, m Message) (*call, error) {
		to := []any{map[string]string{"email": m.To, "type": "to"}}
		for _, a := range m.Cc {
			to = append(to, map[string]string{"email": a, "type": "cc"})
		}
		for _, a := range m.Bcc {
			to = append(to, map[string]string{"email": a, "type": "bcc"})
		}
		msg := map[string]any{"from_email": cmp.Or(m.From, val(c.From)), "from_name": cmp.Or(m.SenderName, val(c.SenderName)),
			"subject": m.Subject, "html": m.HTML, "text": m.Text, "to": to, "metadata": map[string]string{"heraldMessageId": m.ID}}
		if m.ReplyTo != "" {
			msg["headers"] = map[string]string{"Reply-To": m.ReplyTo}
		}
		return &call{url: origin(c, "https://mandrillapp.com") + "/api/1.0/messages/send", json: map[string]any{"key": val(c.APIKey), "message": msg}}, nil
	}, failed: func(r *reply, _ Message) error {
		// A rejected recipient still answers 200 (docs/providers.md, "Email").
		if s := pick(r.doc, "0.status"); s == "rejected" || s == "invalid" {
			return &Error{Msg: "provider refused: " + s + " " + pick(r.doc, "0.reject_reason")}
		}
		return nil
	}, check: func(ctx context.Context, c Credentials, d Deps) error {
		_, err := do(ctx, d.Client, &call{url: origin(c, "https://mandrillapp.com") + "/api/1.0/users/ping", json: map[string]string{"key": val(c.APIKey)}})
		return err
	}},
	"infobip-email": {channel: "email", files: true, required: []string{"apiKey", "baseUrl", "from"}, id: "messages.0.messageId", send: func(c Credentials, m Message) (*call, error) {
		fields := [][2]string{{"from", fromHeader(c, m)}, {"to", m.To}, {"subject", m.Subject}, {"html", m.HTML}, {"text", m.Text}}
		for _, a := range m.Cc {
			fields = append(fields, [2]string{"cc", a})
		}
		for _, a := range m.Bcc {
			fields = append(fields, [2]string{"bcc", a})
		}
		if m.ReplyTo != "" {
			fields = append(fields, [2]string{"replyTo", m.ReplyTo})
		}
		body, ctype := multipartBody(fields, formFiles(m.Attachments, "inlineImage", "attachment")...)
		return &call{url: origin(c, "") + "/email/3/send", header: map[string]string{"Authorization": "App " + val(c.APIKey)}, body: body, contentType: ctype}, nil
	}, check: infobipCheck},
	"plunk": {channel: "email", required: []string{"apiKey", "from"}, id: "emails.0.contact.id", date: "timestamp", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://api.useplunk.com") + "/v1/send", header: bearer(val(c.APIKey)),
			json: map[string]any{"to": m.To, "subject": m.Subject, "body": cmp.Or(m.HTML, m.Text), "from": cmp.Or(m.From, val(c.From)),
				"name": cmp.Or(m.SenderName, val(c.SenderName))}}, nil
	}, failed: flagFailed("success", "message")},
	"mailtrap": {channel: "email", required: []string{"apiKey", "from"}, id: "message_ids.0", send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"from": nameAddr(c, m, "email", "name"), "to": emailObjects(m.To), "subject": m.Subject, "html": m.HTML, "text": m.Text,
			"custom_variables": map[string]string{"heraldMessageId": m.ID}}
		copies(body, m, "cc", "bcc", "email")
		if m.ReplyTo != "" {
			body["headers"] = map[string]string{"Reply-To": m.ReplyTo}
		}
		return &call{url: origin(c, "https://send.api.mailtrap.io") + "/api/send", header: bearer(val(c.APIKey)), json: body}, nil
	}, failed: flagFailed("success", "errors.0")},
	"braze": {channel: "email", files: true, required: []string{"apiKey", "baseUrl", "applicationId", "from"}, build: newBraze},
	"netcore": {channel: "email", required: []string{"apiKey", "from"}, id: "data.message_id", send: func(c Credentials, m Message) (*call, error) {
		p := map[string]any{"to": emailObjects(m.To)}
		copies(p, m, "cc", "bcc", "email")
		body := map[string]any{"from": nameAddr(c, m, "email", "name"), "subject": m.Subject,
			"content": []any{map[string]string{"type": "html", "value": m.HTML}}, "personalizations": []any{p}}
		if m.ReplyTo != "" {
			body["reply_to"] = m.ReplyTo
		}
		return &call{url: origin(c, "https://emailapi.netcorecloud.net") + "/v5.1/mail/send", header: map[string]string{"api_key": val(c.APIKey)}, json: body}, nil
	}, failed: func(r *reply, _ Message) error {
		if pick(r.doc, "status") == "error" {
			return &Error{Msg: "provider refused: " + pick(r.doc, "message")}
		}
		return nil
	}},
}

// nameAddr is {emailKey: from, nameKey: senderName}, without an empty name.
func nameAddr(c Credentials, m Message, emailKey, nameKey string) map[string]string {
	out := map[string]string{emailKey: cmp.Or(m.From, val(c.From))}
	if n := cmp.Or(m.SenderName, val(c.SenderName)); n != "" {
		out[nameKey] = n
	}
	return out
}

// fromHeader is "Sender Name <from>", or the bare address without a name.
func fromHeader(c Credentials, m Message) string {
	from := cmp.Or(m.From, val(c.From))
	if n := cmp.Or(m.SenderName, val(c.SenderName)); n != "" {
		return `"` + strings.ReplaceAll(n, `"`, `'`) + `" <` + from + ">"
	}
	return from
}

func emailObjects(addrs ...string) []any { return emailObjectsKey("email", addrs...) }

func emailObjectsKey(key string, addrs ...string) []any {
	out := make([]any, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, map[string]string{key: a})
	}
	return out
}

// textAndHTML is a content list with the text part first, then HTML, as
// SendGrid requires; an empty part is left out.
func textAndHTML(m Message, typeKey, valueKey, textType, htmlType string) []any {
	var out []any
	if m.Text != "" {
		out = append(out, map[string]string{typeKey: textType, valueKey: m.Text})
	}
	return append(out, map[string]string{typeKey: htmlType, valueKey: cmp.Or(m.HTML, " ")})
}

// copies sets cc and bcc under their keys as lists of {key: address},
// when present.
func copies(body map[string]any, m Message, cc, bcc, key string) {
	if len(m.Cc) > 0 {
		body[cc] = emailObjectsKey(key, m.Cc...)
	}
	if len(m.Bcc) > 0 {
		body[bcc] = emailObjectsKey(key, m.Bcc...)
	}
}

// addCopies sets cc, bcc and reply-to under the given keys when present.
func addCopies(body map[string]any, m Message, cc, bcc, replyTo string) {
	if len(m.Cc) > 0 {
		body[cc] = m.Cc
	}
	if len(m.Bcc) > 0 {
		body[bcc] = m.Bcc
	}
	if m.ReplyTo != "" {
		body[replyTo] = m.ReplyTo
	}
}

// multipartBody encodes fields, then files, as multipart/form-data.
func multipartBody(fields [][2]string, files ...formFile) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range fields {
		w.WriteField(f[0], f[1])
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": f.field, "filename": f.file.Name}))
		h.Set("Content-Type", f.file.MIME)
		part, _ := w.CreatePart(h)
		part.Write(f.file.Content)
	}
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// sparkpostOrigin: region eu (or the legacy "true") is SparkPost's EU host.
func sparkpostOrigin(c Credentials) string {
	if r := strings.ToLower(val(c.Region)); r == "eu" || r == "true" {
		return origin(c, "https://api.eu.sparkpost.com")
	}
	return origin(c, "https://api.sparkpost.com")
}

func sesOrigin(c Credentials) string {
	return origin(c, "https://email."+val(c.Region)+".amazonaws.com")
}

// braze looks up each address's external user id, then sends to them
// (docs/providers.md, "Email"): Braze addresses users, not email addresses. The
// cluster's REST endpoint is the baseUrl, the app the applicationId.
type braze struct {
	c Credentials
	d Deps
}

func newBraze(c Credentials, d Deps) (Sender, error) { return &braze{c, d}, nil }

func (b *braze) Send(ctx context.Context, m Message) (Result, error) {
	base := origin(b.c, "")
	var ids []string
	for _, addr := range append([]string{m.To}, m.Cc...) {
		r, err := do(ctx, b.d.Client, &call{url: base + "/users/export/ids", header: bearer(val(b.c.APIKey)),
			json: map[string]any{"email_address": addr, "fields_to_export": []string{"external_id"}}})
		if err != nil {
			return Result{}, err
		}
		users, _ := pickAny(r.doc, "users").([]any)
		for i := range users {
			if id := pick(users[i], "external_id"); id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return Result{}, Permanent("no Braze user has the address %s", m.To)
	}
	email := map[string]any{"app_id": val(b.c.ApplicationID), "subject": m.Subject, "from": fromHeader(b.c, m), "body": m.HTML,
		"plaintext_body": m.Text, "should_inline_css": true, "extras": map[string]string{"heraldMessageId": m.ID}}
	if m.ReplyTo != "" {
		email["reply_to"] = m.ReplyTo
	}
	if len(m.Bcc) > 0 {
		email["bcc"] = strings.Join(m.Bcc, ",")
	}
	if len(m.Attachments) > 0 {
		email["attachments"] = brazeAttachments(m.Attachments)
	}
	r, err := do(ctx, b.d.Client, &call{url: base + "/messages/send", header: bearer(val(b.c.APIKey)),
		json: map[string]any{"broadcast": false, "external_user_ids": ids, "messages": map[string]any{"email": email}}})
	if err != nil {
		return Result{}, err
	}
	return Result{ID: pick(r.doc, "dispatch_id"), Raw: string(r.body)}, nil
}
