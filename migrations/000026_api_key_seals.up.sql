-- An inbox session proves its subscriber with an HMAC of the subscriberId
-- keyed with one of the environment's API keys, so Herald must be able to
-- compute it. api_keys kept only each key's digest; sealed keeps the key
-- itself, encrypted with a key derived from Herald's secret and bound to
-- the row's hash. Keys made before this column exist only as digests, and
-- stay NULL here until the operator configures them again (HERALD_API_KEY).
ALTER TABLE api_keys ADD COLUMN sealed BLOB;
