package platform

import (
	"context"
	"fmt"
	"net/http"
)

// DefaultMaxRequestStorage is the most bytes one request may cause to be
// stored when HERALD_MAX_REQUEST_STORAGE is not set: a trigger's payload is
// stored once, but what its templates render from it is stored in each
// recipient's messages, so a large payload sent to many subscribers could
// otherwise fill the disk in a few requests.
const DefaultMaxRequestStorage = 64 << 20

type storageLimitKey struct{}

// StorageProblem is the 422 of a request that would store bytes, as what
// describes them, past the server's limit (ServerConfig.MaxRequestStorage),
// or nil when it is within it.
func StorageProblem(ctx context.Context, bytes int64, what string) error {
	limit, _ := ctx.Value(storageLimitKey{}).(int64)
	if limit <= 0 {
		limit = DefaultMaxRequestStorage
	}
	if bytes <= limit {
		return nil
	}
	return &Error{Status: http.StatusUnprocessableEntity,
		Message: fmt.Sprintf("This request would store about %d bytes (%s), over the limit of %d bytes a request may store (HERALD_MAX_REQUEST_STORAGE)",
			bytes, what, limit)}
}
