// Package platform is the floor every domain stands on: the organization,
// its environments and their API keys; authentication; decoding and
// validating requests, and the JSON errors of the "Errors" section of
// docs/api.md; ids and times as the API writes them; idempotency keys; and
// the database, SQLite or PostgreSQL, its two pools (one writer, many
// readers), its prepared-statement caches and its migrations. It serves
// /healthz, /readyz and GET /v1/environments, and imports no domain.
package platform
