package provider

import (
	"encoding/base64"
	"slices"
)

func basicAuth(user, pass string) string {
	return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// from and key are the credentials most cases share.
var (
	emailCreds = map[string]string{"apiKey": "key", "from": "from@acme.test", "senderName": "Acme"}
	smsCreds   = map[string]string{"apiKey": "key", "from": "+15559999"}
)

func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// untested are the SMTP providers, which no HTTP double stands in for:
// TestSend_Outlook365 covers outlook365, and messaging's SMTP tests
// nodemailer, whose send emailjs shares; and web-push, whose body is
// encrypted for each browser: TestSend_WebPush here and messaging's
// TestWebPush, whose push service decrypts it, cover it.
var untested = map[string]bool{"outlook365": true, "emailjs": true, "nodemailer": true, "web-push": true}

// sendCases are every provider's cases: one table, in three files.
var sendCases = slices.Concat(emailCases, smsCases, pushChatCases)

var emailCases = []sendCase{
	{id: "sendgrid", creds: emailCreds, path: "/v3/mail/send", auth: "Authorization: Bearer key", ctype: "application/json",
		fields: map[string]string{"personalizations.0.to.0.email": "ada@example.com", "from.email": "from@acme.test", "from.name": "Acme",
			"subject": "Hi", "content.1.value": "<p>Hi</p>", "custom_args.heraldMessageId": "m1"},
		status: 202, replyH: map[string]string{"X-Message-Id": "sg-1"}, wantID: "sg-1"},
	{id: "ses", creds: with(emailCreds, "apiKey", "AKID", "secretKey", "secret", "region", "eu-west-1"), path: "/v2/email/outbound-emails",
		auth: "sigv4:ses", ctype: "application/json",
		fields: map[string]string{"Destination.ToAddresses.0": "ada@example.com", "FromEmailAddress": `"Acme" <from@acme.test>`,
			"Content.Simple.Subject.Data": "Hi", "Content.Simple.Body.Html.Data": "<p>Hi</p>"},
		reply: `{"MessageId":"ses-1"}`, wantID: "ses-1"},
	{id: "postmark", creds: emailCreds, path: "/email", auth: "X-Postmark-Server-Token: key", ctype: "application/json",
		fields: map[string]string{"To": "ada@example.com", "HtmlBody": "<p>Hi</p>", "TextBody": "Hi", "Subject": "Hi"},
		reply:  `{"MessageID":"pm-1","ErrorCode":0}`, wantID: "pm-1", in200: `{"ErrorCode":406,"Message":"Inactive recipient"}`},
	{id: "resend", creds: emailCreds, path: "/emails", auth: "Authorization: Bearer key", ctype: "application/json",
		headers: map[string]string{"Idempotency-Key": "m1"},
		fields:  map[string]string{"to.0": "ada@example.com", "from": `"Acme" <from@acme.test>`, "html": "<p>Hi</p>"},
		reply:   `{"id":"rs-1"}`, wantID: "rs-1"},
	{id: "mailgun", creds: with(emailCreds, "domain", "acme.test"), path: "/v3/acme.test/messages", auth: basicAuth("api", "key"),
		ctype: "multipart/form-data", fields: map[string]string{"to": "ada@example.com", "subject": "Hi", "html": "<p>Hi</p>"},
		reply: `{"id":"<mg-1@acme.test>","message":"Queued. Thank you."}`, wantID: "<mg-1@acme.test>"},
	{id: "mailjet", creds: with(emailCreds, "secretKey", "secret"), path: "/v3.1/send", auth: basicAuth("key", "secret"), ctype: "application/json",
		fields: map[string]string{"Messages.0.To.0.Email": "ada@example.com", "Messages.0.From.Email": "from@acme.test", "Messages.0.HTMLPart": "<p>Hi</p>"},
		reply:  `{"Messages":[{"Status":"success","To":[{"Email":"ada@example.com","MessageID":288230}]}]}`, wantID: "288230",
		in200: `{"Messages":[{"Status":"error","Errors":[{"ErrorMessage":"Invalid email"}]}]}`},
	{id: "sendinblue", creds: emailCreds, path: "/v3/smtp/email", auth: "api-key: key", ctype: "application/json",
		fields: map[string]string{"to.0.email": "ada@example.com", "sender.email": "from@acme.test", "htmlContent": "<p>Hi</p>"},
		status: 201, reply: `{"messageId":"<br-1@smtp-relay>"}`, wantID: "<br-1@smtp-relay>"},
	{id: "sparkpost", creds: emailCreds, path: "/api/v1/transmissions", auth: "Authorization: key", ctype: "application/json",
		fields: map[string]string{"recipients.0.address.email": "ada@example.com", "content.subject": "Hi", "content.from.email": "from@acme.test"},
		reply:  `{"results":{"total_accepted_recipients":1,"id":"sp-1"}}`, wantID: "sp-1"},
	{id: "mailersend", creds: emailCreds, path: "/v1/email", auth: "Authorization: Bearer key", ctype: "application/json",
		fields: map[string]string{"to.0.email": "ada@example.com", "from.name": "Acme", "text": "Hi"},
		status: 202, replyH: map[string]string{"X-Message-Id": "ms-1"}, wantID: "ms-1"},
	{id: "mandrill", creds: emailCreds, path: "/api/1.0/messages/send", ctype: "application/json",
		fields: map[string]string{"key": "key", "message.to.0.email": "ada@example.com", "message.from_email": "from@acme.test"},
		reply:  `[{"email":"ada@example.com","status":"sent","_id":"md-1"}]`, wantID: "md-1",
		in200: `[{"email":"ada@example.com","status":"rejected","reject_reason":"hard-bounce"}]`},
	{id: "infobip-email", creds: emailCreds, path: "/email/3/send", auth: "Authorization: App key", ctype: "multipart/form-data",
		fields: map[string]string{"to": "ada@example.com", "subject": "Hi"}, reply: `{"messages":[{"messageId":"ib-1"}]}`, wantID: "ib-1"},
	{id: "plunk", creds: emailCreds, path: "/v1/send", auth: "Authorization: Bearer key", ctype: "application/json",
		fields: map[string]string{"to": "ada@example.com", "body": "<p>Hi</p>", "name": "Acme"},
		reply:  `{"success":true,"emails":[{"contact":{"id":"pl-1"}}]}`, wantID: "pl-1", in200: `{"success":false,"message":"Unverified sender"}`},
	{id: "mailtrap", creds: emailCreds, path: "/api/send", auth: "Authorization: Bearer key", ctype: "application/json",
		fields: map[string]string{"to.0.email": "ada@example.com", "from.email": "from@acme.test"},
		reply:  `{"success":true,"message_ids":["mt-1"]}`, wantID: "mt-1", in200: `{"success":false,"errors":["bad from"]}`},
	{id: "braze", creds: with(emailCreds, "applicationId", "app-1"), path: "/messages/send", auth: "Authorization: Bearer key", ctype: "application/json",
		aux:    map[string]string{"/users/export/ids": `{"users":[{"external_id":"u-1"}]}`},
		fields: map[string]string{"external_user_ids.0": "u-1", "messages.email.app_id": "app-1", "messages.email.body": "<p>Hi</p>"},
		status: 201, reply: `{"dispatch_id":"bz-1","message":"success"}`, wantID: "bz-1"},
	{id: "netcore", creds: emailCreds, path: "/v5.1/mail/send", auth: "api_key: key", ctype: "application/json",
		fields: map[string]string{"personalizations.0.to.0.email": "ada@example.com", "content.0.value": "<p>Hi</p>"},
		reply:  `{"data":{"message_id":"nc-1"},"status":"success"}`, wantID: "nc-1", in200: `{"status":"error","message":"bad key"}`},
	{id: "email-webhook", creds: with(emailCreds, "webhookUrl", "{base}/mail"), path: "/mail", ctype: "application/json",
		fields: map[string]string{"to": "ada@example.com", "subject": "Hi", "senderName": "Acme"}, reply: `{}`},
}
