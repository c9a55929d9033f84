// Package platform is Herald's HTTP edge and who a request acts for: the
// organization, its environments and their API keys, bootstrapped at the
// first start; authentication by API key or by an inbox subscriber's
// token, with rate limits; decoding and validating requests, and the JSON
// errors every route answers; idempotency keys; request logging and the
// metrics registry; the compat wire for other platforms' clients; and the
// server that wraps the domains' routes and serves /healthz, /readyz,
// /openapi.json, /docs and GET /v1/environments. It imports no domain.
package platform
