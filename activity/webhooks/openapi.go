package webhooks

import _ "embed"

// OpenAPI is this package's part of the API description: the routes of
// routes.go and their schemas, merged into /openapi.json (see
// platform.MergeOpenAPI). A route added to routes.go is described there.
//
//go:embed openapi.yaml
var OpenAPI []byte
