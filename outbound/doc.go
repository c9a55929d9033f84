// Package outbound guards the connections Herald opens on a user's behalf
// (provider sends, webhooks, integration checks): a dialer and an HTTP
// transport that refuse loopback, private and other internal addresses,
// checked after DNS resolution, unless the operator's allow list
// (HERALD_OUTBOUND_ALLOW) names them. It imports no other Herald package.
package outbound
