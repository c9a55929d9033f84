package activity

import "strings"

// singleEventProviders is the providerId set (docs/api.md, "Provider ids")
// for jobs and execution details of GET /v1/notifications/{id}.
var singleEventProviders = set(`
	emailjs mailgun mailjet mandrill nodemailer postmark sendgrid sendinblue ses netcore infobip-email resend
	plunk mailersend mailtrap clickatell outlook365 service-email sparkpost email-webhook braze
	nexmo plivo sms77 sms-central sns telnyx twilio gupshup firetext infobip-sms burst-sms bulk-sms isend-sms
	forty-six-elks kannel maqsam termii africas-talking service-sms sendchamp generic-sms clicksend bandwidth
	messagebird simpletexting azure-sms ring-central brevo-sms eazy-sms mobishastra afro-message
	fcm apns expo one-signal pushpad push-webhook pusher-beams
	service slack discord msteams mattermost ryver zulip grafana-on-call getstream rocket-chat whatsapp-business chat-webhook`)

// listProviders is the list endpoint's wider set.
var listProviders = func() map[string]bool {
	m := set("unifonic smsmode imedia sinch appio service-slack")
	for k := range singleEventProviders {
		m[k] = true
	}
	return m
}()

// wireProvider keeps a providerId inside the set the endpoint's schema
// allows; a provider outside it is shown as "service" (Herald's own), so a
// strict client can still read the record.
func wireProvider(id string, single bool) string {
	allowed := listProviders
	if single {
		allowed = singleEventProviders
	}
	if allowed[id] {
		return id
	}
	return "service"
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
