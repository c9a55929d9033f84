package activity

import "github.com/herald-notify/herald/platform"

// UseOrganizations lets notifications leave their organization out, read
// from orgs as their environment's. Without it, each stores its own.
func (s *Store) UseOrganizations(orgs *platform.Organizations) *Store {
	s.orgs = orgs
	return s
}
