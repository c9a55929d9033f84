package provider

import (
	"cmp"
	"context"
	"net/url"
	"strings"
)

// smsProviders are the major SMS APIs of the "Provider ids" section of
// docs/api.md (docs/providers.md, "SMS"); moreSMSProviders the long tail
// (docs/providers.md, "SMS"). Each sends from the override's from, else the
// credentials'.
var smsProviders = map[string]spec{
	"twilio": {channel: "sms", required: []string{"accountSid", "token", "from"}, id: "sid", date: "date_created",
		send: func(c Credentials, m Message) (*call, error) {
			form := url.Values{"To": {m.To}, "From": {sender(c, m)}, "Body": {m.Content}}
			if c.StatusCallback != "" {
				form.Set("StatusCallback", c.StatusCallback)
			}
			return &call{url: twilioAccount(c) + "/Messages.json", user: val(c.AccountSID), pass: val(c.Token), form: form}, nil
		}, check: checkCall(func(c Credentials) *call {
			return &call{url: twilioAccount(c) + ".json", user: val(c.AccountSID), pass: val(c.Token)}
		})},
	"nexmo": {channel: "sms", required: []string{"apiKey", "secretKey", "from"}, id: "messages.0.message-id",
		send: func(c Credentials, m Message) (*call, error) {
			form := url.Values{"api_key": {val(c.APIKey)}, "api_secret": {val(c.SecretKey)}, "from": {sender(c, m)},
				"to": {m.To}, "text": {m.Content}, "client-ref": {m.ID}}
			if c.StatusCallback != "" {
				form.Set("callback", c.StatusCallback)
			}
			return &call{url: origin(c, "https://rest.nexmo.com") + "/sms/json", form: form}, nil
		}, failed: func(r *reply, _ Message) error {
			// Vonage answers 200 with a status per part: "0" is sent, 1
			// (throttled) and 5 (internal error) may pass later (docs/providers.md, "SMS").
			s := pick(r.doc, "messages.0.status")
			if s == "" || s == "0" {
				return nil
			}
			return &Error{Msg: "provider refused: status " + s + ": " + pick(r.doc, "messages.0.error-text"), Retryable: s == "1" || s == "5"}
		}, check: checkCall(func(c Credentials) *call {
			return &call{url: origin(c, "https://rest.nexmo.com") + "/account/get-balance?" +
				url.Values{"api_key": {val(c.APIKey)}, "api_secret": {val(c.SecretKey)}}.Encode()}
		})},
	"plivo": {channel: "sms", required: []string{"accountSid", "token", "from"}, id: "message_uuid.0",
		send: func(c Credentials, m Message) (*call, error) {
			body := map[string]string{"src": sender(c, m), "dst": m.To, "text": m.Content}
			if c.StatusCallback != "" {
				body["url"], body["method"] = c.StatusCallback, "POST"
			}
			return &call{url: origin(c, "https://api.plivo.com") + "/v1/Account/" + val(c.AccountSID) + "/Message/",
				user: val(c.AccountSID), pass: val(c.Token), json: body}, nil
		}, check: checkCall(func(c Credentials) *call {
			return &call{url: origin(c, "https://api.plivo.com") + "/v1/Account/" + val(c.AccountSID) + "/", user: val(c.AccountSID), pass: val(c.Token)}
		})},
	"telnyx": {channel: "sms", required: []string{"apiKey", "from"}, id: "data.id", date: "data.received_at",
		send: func(c Credentials, m Message) (*call, error) {
			body := map[string]string{"from": sender(c, m), "to": m.To, "text": m.Content}
			if p := val(c.MessageProfileID); p != "" {
				body["messaging_profile_id"] = p
			}
			if c.StatusCallback != "" {
				body["webhook_url"] = c.StatusCallback
			}
			return &call{url: origin(c, "https://api.telnyx.com") + "/v2/messages", header: bearer(val(c.APIKey)), json: body}, nil
		}, check: checkCall(func(c Credentials) *call {
			return &call{url: origin(c, "https://api.telnyx.com") + "/v2/balance", header: bearer(val(c.APIKey))}
		})},
	"sns": {channel: "sms", required: []string{"apiKey", "secretKey", "region"}, build: func(c Credentials, d Deps) (Sender, error) {
		return &httpSender{creds: c, deps: d, s: spec{id: "xml:MessageId", send: func(c Credentials, m Message) (*call, error) {
			form := url.Values{"Action": {"Publish"}, "Version": {"2010-03-31"}, "PhoneNumber": {m.To}, "Message": {m.Content},
				"MessageAttributes.entry.1.Name": {"AWS.SNS.SMS.SMSType"}, "MessageAttributes.entry.1.Value.DataType": {"String"},
				"MessageAttributes.entry.1.Value.StringValue": {"Transactional"}}
			if f := sender(c, m); f != "" {
				form["MessageAttributes.entry.2.Name"] = []string{"AWS.SNS.SMS.SenderID"}
				form["MessageAttributes.entry.2.Value.DataType"] = []string{"String"}
				form["MessageAttributes.entry.2.Value.StringValue"] = []string{f}
			}
			return &call{url: snsOrigin(c) + "/", form: form, sign: sigV4(c, "sns", d)}, nil
		}}}, nil
	}, check: func(ctx context.Context, c Credentials, d Deps) error {
		form := url.Values{"Action": {"GetSMSAttributes"}, "Version": {"2010-03-31"}}
		_, err := do(ctx, d.Client, &call{url: snsOrigin(c) + "/", form: form, sign: sigV4(c, "sns", d)})
		return err
	}},
	"messagebird": {channel: "sms", required: []string{"accessKey", "from"}, id: "id", date: "createdDatetime",
		send: func(c Credentials, m Message) (*call, error) {
			body := map[string]any{"originator": sender(c, m), "recipients": []string{m.To}, "body": m.Content, "reference": m.ID}
			if c.StatusCallback != "" {
				body["reportUrl"] = c.StatusCallback
			}
			return &call{url: origin(c, "https://rest.messagebird.com") + "/messages", header: map[string]string{"Authorization": "AccessKey " + val(c.AccessKey)},
				json: body}, nil
		}, check: checkCall(func(c Credentials) *call {
			return &call{url: origin(c, "https://rest.messagebird.com") + "/balance", header: map[string]string{"Authorization": "AccessKey " + val(c.AccessKey)}}
		})},
	"infobip-sms": {channel: "sms", required: []string{"apiKey", "baseUrl", "from"}, id: "messages.0.messageId",
		send: func(c Credentials, m Message) (*call, error) {
			return &call{url: origin(c, "") + "/sms/2/text/advanced", header: map[string]string{"Authorization": "App " + val(c.APIKey)},
				json: map[string]any{"messages": []any{map[string]any{"from": sender(c, m), "destinations": []any{map[string]string{"to": m.To, "messageId": m.ID}}, "text": m.Content}}}}, nil
		}, check: infobipCheck},
	// sinch: the service plan id is the accountSid, the region (eu, us,
	// au, br, ca) picks the host.
	"sinch": {channel: "sms", required: []string{"accountSid", "apiToken", "from"}, id: "id", date: "created_at",
		send: func(c Credentials, m Message) (*call, error) {
			return &call{url: sinchOrigin(c) + "/xms/v1/" + val(c.AccountSID) + "/batches", header: bearer(val(c.APIToken)),
				json: map[string]any{"from": sender(c, m), "to": []string{m.To}, "body": m.Content}}, nil
		}, check: checkCall(func(c Credentials) *call {
			return &call{url: sinchOrigin(c) + "/xms/v1/" + val(c.AccountSID) + "/batches?page_size=1", header: bearer(val(c.APIToken))}
		})},
	"termii": {channel: "sms", required: []string{"apiKey", "from"}, id: "message_id", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://api.ng.termii.com") + "/api/sms/send",
			json: map[string]string{"to": m.To, "from": sender(c, m), "sms": m.Content, "type": "plain", "channel": "generic", "api_key": val(c.APIKey)}}, nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://api.ng.termii.com") + "/api/get-balance?" + url.Values{"api_key": {val(c.APIKey)}}.Encode()}
	})},
	"africas-talking": {channel: "sms", required: []string{"apiKey", "user"}, id: "SMSMessageData.Recipients.0.messageId",
		send: func(c Credentials, m Message) (*call, error) {
			host := "https://api.africastalking.com"
			if val(c.User) == "sandbox" {
				host = "https://api.sandbox.africastalking.com"
			}
			form := url.Values{"username": {val(c.User)}, "to": {m.To}, "message": {m.Content}}
			if f := sender(c, m); f != "" {
				form.Set("from", f)
			}
			return &call{url: origin(c, host) + "/version1/messaging", header: map[string]string{"apiKey": val(c.APIKey)}, form: form}, nil
		}, failed: func(r *reply, _ Message) error {
			// statusCode 100–102 are accepted; 5xx codes may pass later.
			code := pick(r.doc, "SMSMessageData.Recipients.0.statusCode")
			if code == "" || code == "100" || code == "101" || code == "102" {
				return nil
			}
			return &Error{Msg: "provider refused: " + pick(r.doc, "SMSMessageData.Recipients.0.status"), Retryable: strings.HasPrefix(code, "5")}
		}},
	"clicksend": {channel: "sms", required: []string{"user", "apiKey"}, id: "data.messages.0.message_id", date: "data.messages.0.date",
		send: func(c Credentials, m Message) (*call, error) {
			msg := map[string]string{"to": m.To, "body": m.Content, "source": "herald", "custom_string": m.ID}
			if f := sender(c, m); f != "" {
				msg["from"] = f
			}
			return &call{url: origin(c, "https://rest.clicksend.com") + "/v3/sms/send", user: val(c.User), pass: val(c.APIKey),
				json: map[string]any{"messages": []any{msg}}}, nil
		}, failed: func(r *reply, _ Message) error {
			if s := pick(r.doc, "data.messages.0.status"); s != "" && s != "SUCCESS" {
				return &Error{Msg: "provider refused: " + s}
			}
			return nil
		}, check: checkCall(func(c Credentials) *call {
			return &call{url: origin(c, "https://rest.clicksend.com") + "/v3/account", user: val(c.User), pass: val(c.APIKey)}
		})},
	// bandwidth: the messaging application id is the applicationId (the
	// reference passes the account id there: docs/providers.md, "SMS").
	"bandwidth": {channel: "sms", required: []string{"user", "password", "accountSid", "applicationId", "from"}, id: "id", date: "time",
		send: func(c Credentials, m Message) (*call, error) {
			return &call{url: origin(c, "https://messaging.bandwidth.com") + "/api/v2/users/" + val(c.AccountSID) + "/messages",
				user: val(c.User), pass: val(c.Password),
				json: map[string]any{"applicationId": val(c.ApplicationID), "to": []string{m.To}, "from": sender(c, m), "text": m.Content, "tag": m.ID}}, nil
		}},
}

// sender is the override's from, else the credentials'.
func sender(c Credentials, m Message) string { return cmp.Or(m.From, val(c.From)) }

func twilioAccount(c Credentials) string {
	return origin(c, "https://api.twilio.com") + "/2010-04-01/Accounts/" + val(c.AccountSID)
}

func snsOrigin(c Credentials) string { return origin(c, "https://sns."+val(c.Region)+".amazonaws.com") }

func sinchOrigin(c Credentials) string {
	return origin(c, "https://"+cmp.Or(strings.ToLower(val(c.Region)), "eu")+".sms.api.sinch.com")
}

// statusFailed fails a 2xx answer whose field equals bad, with the reason
// at reason.
func statusFailed(field, bad, reason string) func(*reply, Message) error {
	return func(r *reply, _ Message) error {
		if pick(r.doc, field) == bad {
			return &Error{Msg: "provider refused: " + pick(r.doc, reason)}
		}
		return nil
	}
}

// infobipCheck reads the account's balance, Infobip's cheapest
// authenticated call.
var infobipCheck = checkCall(func(c Credentials) *call {
	return &call{url: origin(c, "") + "/account/1/balance", header: map[string]string{"Authorization": "App " + val(c.APIKey)}}
})
