// Package messaging stores the messages that workflow steps deliver, serves a
// subscriber's in-app feed and its read/seen state, lists and deletes messages,
// and delivers each channel step through a real provider (spec §2.9–§2.11,
// §4.4, §4.7, §4.8; contract §8 and §9).
//
// Delivery. activity calls Deliverer.Deliver once per channel step with a
// Delivery and records the Outcome it answers. The step's controls are rendered
// with Liquid against {subscriber, payload, steps}; an email body is an HTML
// string, a block-editor (Maily) document converted to HTML, or an EmailBlock
// array, wrapped in the default layout unless layoutId is null. One message is
// stored per job (job_id is unique), then sent: in_app through "service" (the
// stored message is the delivery), email and sms through the environment's
// primary active integration, chat and push through every active integration
// for which the subscriber has channel credentials.
//
// Rendering, through package templates. In an email's HTML every
// interpolated value is HTML-escaped unless the step's
// disableOutputSanitization is true; subjects and the text of sms, chat,
// push and in_app are never escaped. Each render is bounded: 100,000 loop
// iterations, 4 MiB of output or of any captured or assigned string, one
// second for a step's templates, no include; a template past a limit, or a
// filter that fails on its arguments, fails the step with the reason.
//
// Providers: nodemailer (SMTP: secure is implicit TLS, requireTls demands
// STARTTLS, ignoreTls never uses it, otherwise STARTTLS when offered),
// email-webhook, generic-sms, chat-webhook, slack, discord, msteams,
// mattermost and push-webhook (one request per device token). Webhooks are
// JSON POSTs with a 15 s timeout that follow redirects only to the same host.
//
// Signed webhooks. When an integration's credentials have "hmac": true, every
// request carries the header
//
//	X-Herald-Signature: sha256=<hex of HMAC-SHA256(secretKey, raw request body)>
//
// so the receiver can recompute it over the exact bytes it received.
//
// Mark-as. POST /v1/subscribers/{subscriberId}/messages/mark-as changes only
// the subscriber's own messages in the caller's environment. Ids that belong
// to anyone else, or to nothing, are ignored and left untouched; the answer
// (201) lists the messages that were changed, [] when none of the ids was
// the subscriber's.
package messaging
