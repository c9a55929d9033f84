package console

import "github.com/herald-notify/herald/platform"

// keysData is what the API keys page shows.
type keysData struct {
	Keys  []platform.APIKey
	Shown *shownOnce // a new key, this once
}

// handleKeys serves GET /console/env/{env}/keys: the environment's API
// keys, each by its last four characters, when made and last used.
func handleKeys(d *Deps) handler {
	return func(p *page) error { return renderKeys(p, d, nil) }
}

func renderKeys(p *page, d *Deps, shown *shownOnce) error {
	keys, err := environmentKeys(p, d)
	if err != nil {
		return err
	}
	return p.render("keys", "keys", "API keys", keysData{Keys: keys, Shown: shown})
}

// environmentKeys are the page's environment's keys, newest first.
func environmentKeys(p *page, d *Deps) ([]platform.APIKey, error) {
	all, err := platform.ListAPIKeys(p.r.Context(), d.DB)
	if err != nil {
		return nil, err
	}
	var out []platform.APIKey
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Environment == p.env.Name {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// handleKeyCreate serves POST /console/env/{env}/keys: a new key, shown in
// the answer this once; only its hash is kept.
func handleKeyCreate(d *Deps) handler {
	return func(p *page) error {
		key, k, err := platform.CreateAPIKey(p.r.Context(), d.DB, p.env.Name, d.Secret, d.Now())
		if err != nil {
			return err
		}
		return renderKeys(p, d, &shownOnce{What: "key", Value: key, Email: k.ID})
	}
}

// handleKeyRevoke serves POST /console/env/{env}/keys/{id}/revoke: every
// server refuses the key from its next request on.
func handleKeyRevoke(d *Deps) handler {
	return func(p *page) error {
		keys, err := environmentKeys(p, d)
		if err != nil {
			return err
		}
		id := p.r.PathValue("id")
		for _, k := range keys {
			if k.ID == id && k.RevokedAt == "" {
				if _, err := platform.RevokeAPIKey(p.r.Context(), d.DB, id, d.Now()); err != nil {
					return err
				}
				return p.redirect(p.envURL("keys"), "The key ending "+k.LastFour+" is revoked.")
			}
		}
		return platform.NotFound("%s has no working key %s", p.env.Name, id)
	}
}
