package provider

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"
)

// moreSMSProviders are the long tail of the SMS providers (docs/api.md,
// "Provider ids"; docs/providers.md, "SMS").
var moreSMSProviders = map[string]spec{
	"sms77": {channel: "sms", required: []string{"apiKey", "from"}, id: "messages.0.id", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://gateway.seven.io") + "/api/sms", header: map[string]string{"X-Api-Key": val(c.APIKey)},
			json: map[string]any{"from": sender(c, m), "to": m.To, "text": m.Content, "json": true, "foreign_id": m.ID}}, nil
	}, failed: func(r *reply, _ Message) error {
		if s := pick(r.doc, "success"); s != "" && s != "100" {
			return &Error{Msg: "provider refused: code " + s}
		}
		return nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://gateway.seven.io") + "/api/balance", header: map[string]string{"X-Api-Key": val(c.APIKey)}}
	})},
	"firetext": {channel: "sms", required: []string{"apiKey", "from"}, id: "header:X-Message", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://www.firetext.co.uk") + "/api/sendsms", form: url.Values{"apiKey": {val(c.APIKey)},
			"to": {m.To}, "from": {sender(c, m)}, "message": {m.Content}, "reference": {m.ID}}}, nil
	}, failed: func(r *reply, _ Message) error {
		if body := strings.TrimSpace(string(r.body)); !strings.HasPrefix(body, "0:") {
			return &Error{Msg: "provider refused: " + truncate(body, 500)}
		}
		return nil
	}},
	"burst-sms": {channel: "sms", required: []string{"apiKey", "secretKey"}, id: "message_id", date: "send_at", send: func(c Credentials, m Message) (*call, error) {
		form := url.Values{"message": {m.Content}, "to": {m.To}}
		if f := sender(c, m); f != "" {
			form.Set("from", f)
		}
		return &call{url: origin(c, "https://api.transmitsms.com") + "/send-sms.json", user: val(c.APIKey), pass: val(c.SecretKey), form: form}, nil
	}, failed: func(r *reply, _ Message) error {
		if code := pick(r.doc, "error.code"); code != "" && code != "SUCCESS" {
			return &Error{Msg: "provider refused: " + code + ": " + pick(r.doc, "error.description")}
		}
		return nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://api.transmitsms.com") + "/get-balance.json", user: val(c.APIKey), pass: val(c.SecretKey)}
	})},
	// bulk-sms: apiToken is "tokenId:tokenSecret".
	"bulk-sms": {channel: "sms", required: []string{"apiToken"}, id: "0.id", send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"to": m.To, "body": m.Content}
		if f := sender(c, m); f != "" {
			body["from"] = f
		}
		id, secret, _ := strings.Cut(val(c.APIToken), ":")
		return &call{url: origin(c, "https://api.bulksms.com") + "/v1/messages", user: id, pass: secret, json: body}, nil
	}, check: checkCall(func(c Credentials) *call {
		id, secret, _ := strings.Cut(val(c.APIToken), ":")
		return &call{url: origin(c, "https://api.bulksms.com") + "/v1/profile", user: id, pass: secret}
	})},
	"isend-sms": {channel: "sms", required: []string{"apiToken"}, id: "data.uid", send: func(c Credentials, m Message) (*call, error) {
		to := strings.TrimPrefix(strings.TrimPrefix(m.To, "+"), "00")
		return &call{url: origin(c, "https://send.com.ly") + "/api/v3/sms/send", header: bearer(val(c.APIToken)),
			json: map[string]string{"sender_id": sender(c, m), "recipient": to, "type": "unicode", "message": m.Content}}, nil
	}, failed: statusFailed("status", "error", "message")},
	"forty-six-elks": {channel: "sms", required: []string{"user", "password", "from"}, id: "id", date: "created", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://api.46elks.com") + "/a1/sms", user: val(c.User), pass: val(c.Password),
			form: url.Values{"from": {sender(c, m)}, "to": {m.To}, "message": {m.Content}}}, nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://api.46elks.com") + "/a1/me", user: val(c.User), pass: val(c.Password)}
	})},
	// kannel answers no message id; Herald's own stands in.
	"kannel": {channel: "sms", required: []string{"host", "port"}, send: func(c Credentials, m Message) (*call, error) {
		q := url.Values{"username": {val(c.User)}, "password": {val(c.Password)}, "from": {sender(c, m)}, "to": {m.To}, "text": {m.Content}}
		return &call{method: http.MethodGet, url: origin(c, "http://"+val(c.Host)+":"+val(c.Port)) + "/cgi-bin/sendsms?" + q.Encode()}, nil
	}},
	"maqsam": {channel: "sms", required: []string{"apiKey", "secretKey", "from"}, id: "message.identifier", date: "message.timestamp",
		send: func(c Credentials, m Message) (*call, error) {
			return &call{url: origin(c, "https://api.maqsam.com") + "/v2/sms", user: val(c.APIKey), pass: val(c.SecretKey),
				json: map[string]string{"to": m.To, "message": m.Content, "sender": sender(c, m)}}, nil
		}},
	"gupshup": {channel: "sms", required: []string{"user", "password"}, send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://enterprise.smsgupshup.com") + "/GatewayAPI/rest", form: url.Values{"method": {"sendMessage"},
			"send_to": {m.To}, "msg": {m.Content}, "msg_type": {"text"}, "format": {"text"}, "v": {"1.1"}, "auth_scheme": {"plain"},
			"userid": {val(c.User)}, "password": {val(c.Password)}}}, nil
	}, failed: func(r *reply, _ Message) error {
		// "success | 91… | 1234-…" or "error | 105 | …".
		if parts := strings.Split(string(r.body), "|"); strings.TrimSpace(parts[0]) != "success" {
			return &Error{Msg: "provider refused: " + truncate(strings.TrimSpace(string(r.body)), 500)}
		}
		return nil
	}},
	"sendchamp": {channel: "sms", required: []string{"apiKey", "from"}, id: "data.business_uid", date: "data.created_at",
		send: func(c Credentials, m Message) (*call, error) {
			return &call{url: origin(c, "https://api.sendchamp.com") + "/api/v1/sms/send", header: bearer(val(c.APIKey)),
				json: map[string]any{"sender_name": sender(c, m), "to": []string{m.To}, "message": m.Content, "route": "international"}}, nil
		}},
	"simpletexting": {channel: "sms", required: []string{"apiKey", "from"}, id: "id", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://api-app2.simpletexting.com") + "/v2/api/messages", header: bearer(val(c.APIKey)),
			json: map[string]string{"contactPhone": m.To, "accountPhone": sender(c, m), "mode": "SINGLE_SMS_STRICTLY", "text": m.Content}}, nil
	}},
	"brevo-sms": {channel: "sms", required: []string{"apiKey", "from"}, id: "messageId", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://api.brevo.com") + "/v3/transactionalSMS/sms", header: map[string]string{"api-key": val(c.APIKey)},
			json: map[string]string{"sender": sender(c, m), "recipient": m.To, "content": m.Content}}, nil
	}, check: checkCall(func(c Credentials) *call {
		return &call{url: origin(c, "https://api.brevo.com") + "/v3/account", header: map[string]string{"api-key": val(c.APIKey)}}
	})},
	"eazy-sms": {channel: "sms", required: []string{"apiKey", "channelId"}, id: "id", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://api.eazy.im") + "/v3/channels/" + val(c.ChannelID) + "/messages/" + url.PathEscape(m.To) + "@sms.eazy.im",
			header: bearer(val(c.APIKey)), json: map[string]any{"message": map[string]string{"text": m.Content, "type": "text"}}}, nil
	}},
	"mobishastra": {channel: "sms", required: []string{"baseUrl", "user", "password", "from"}, id: "0.msg_id", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, ""), json: []any{map[string]string{"Sender": sender(c, m), "number": m.To, "msg": m.Content,
			"user": val(c.User), "pwd": val(c.Password)}}}, nil
	}, failed: func(r *reply, _ Message) error {
		if pick(r.doc, "0.msg_id") == "" {
			return &Error{Msg: "provider refused: " + pick(r.doc, "0.str_response")}
		}
		return nil
	}},
	// sms-central answers no message id.
	"sms-central": {channel: "sms", required: []string{"user", "password", "from"}, send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://my.smscentral.com.au/api/v3.2"), form: url.Values{"ACTION": {"send"}, "ORIGINATOR": {sender(c, m)},
			"USERNAME": {val(c.User)}, "PASSWORD": {val(c.Password)}, "RECIPIENT": {m.To}, "MESSAGE_TEXT": {m.Content}, "REFERENCE": {m.ID}}}, nil
	}},
	"afro-message": {channel: "sms", required: []string{"apiKey", "from"}, id: "response.message_id", send: func(c Credentials, m Message) (*call, error) {
		q := url.Values{"from": {val(c.From)}, "sender": {val(c.SenderName)}, "to": {m.To}, "message": {m.Content}}
		return &call{method: http.MethodGet, url: origin(c, "https://api.afromessage.com") + "/api/send?" + q.Encode(), header: bearer(val(c.APIKey))}, nil
	}, failed: func(r *reply, _ Message) error {
		if a := pick(r.doc, "acknowledge"); a != "" && a != "success" {
			return &Error{Msg: "provider refused: " + pick(r.doc, "response.errors.0")}
		}
		return nil
	}},
	"unifonic": {channel: "sms", required: []string{"appSid", "senderId"}, id: "data.MessageID", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://el.cloud.unifonic.com") + "/rest/SMS/messages", form: url.Values{"AppSid": {val(c.AppSID)},
			"SenderID": {cmp.Or(m.From, val(c.SenderID))}, "Recipient": {strings.TrimPrefix(m.To, "+")}, "Body": {m.Content}, "responseType": {"JSON"}}}, nil
	}, failed: func(r *reply, _ Message) error {
		if s := pick(r.doc, "success"); s == "false" {
			return &Error{Msg: "provider refused: " + pick(r.doc, "message")}
		}
		return nil
	}},
	"smsmode": {channel: "sms", required: []string{"apiKey"}, id: "messageId", date: "acceptedAt", send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"recipient": map[string]string{"to": m.To}, "body": map[string]string{"text": m.Content}, "refClient": m.ID}
		if f := sender(c, m); f != "" {
			body["from"] = f
		}
		return &call{url: origin(c, "https://rest.smsmode.com") + "/sms/v1/messages", header: map[string]string{"X-Api-Key": val(c.APIKey)}, json: body}, nil
	}},
	"imedia": {channel: "sms", required: []string{"token", "from"}, id: "referentId", send: func(c Credentials, m Message) (*call, error) {
		return &call{url: origin(c, "https://api.mobilebranding.vn") + "/api/SMSBrandname/SendSMS", header: map[string]string{"token": val(c.Token)},
			json: map[string]any{"to": m.To, "from": sender(c, m), "message": m.Content, "scheduled": "", "requestId": m.ID, "useUnicode": 1, "type": 1}}, nil
	}, failed: func(r *reply, _ Message) error {
		if code := pick(r.doc, "errorCode"); code != "" && code != "000" {
			return &Error{Msg: "provider refused: code " + code + ": " + pick(r.doc, "errorMessage")}
		}
		return nil
	}},
	"clickatell": {channel: "sms", required: []string{"apiKey"}, id: "messages.0.apiMessageId", send: func(c Credentials, m Message) (*call, error) {
		body := map[string]any{"to": []string{m.To}, "content": m.Content}
		if f := sender(c, m); f != "" {
			body["from"] = f
		}
		return &call{url: origin(c, "https://platform.clickatell.com") + "/messages", header: map[string]string{"Authorization": val(c.APIKey)}, json: body}, nil
	}},
}
