// Package messaging owns the messages that workflow steps deliver and their
// states: it renders a channel step, sends it through the provider the
// environment's integrations choose and stores the message, and it serves the
// subscriber's feed, mark-as, the messages list and its deletes, and the
// inbox that browsers speak, /v1/inbox with its live socket.io events
// (docs/messages.md; docs/inbox.md).
package messaging
