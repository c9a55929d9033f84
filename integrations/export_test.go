package integrations

import (
	"context"
	"net/http"
	"time"
)

// SetCheckTimeout shortens the provider check's time, which a failed check
// waits out (see unreachable), so tests of failures stay fast.
func (s *Store) SetCheckTimeout(d time.Duration) { s.checkTimeout = d }

// TrustSNSHost makes the store take SNS certificates and confirmation URLs
// from host, fetched with client, as it takes them from Amazon's: the
// tests' SNS runs on their own TLS server.
func (s *Store) TrustSNSHost(host string, client *http.Client) {
	s.sns.hostOK = func(h string) bool { return h == host }
	s.sns.client = client
}

// Replayed is replayed, for the test of the tokens' bound.
func (s *Store) Replayed(integrationID, token string, now time.Time) (bool, error) {
	return s.replayed(context.Background(), integrationID, token, now)
}
