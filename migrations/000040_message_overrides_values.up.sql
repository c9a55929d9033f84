-- A message's overrides are its trigger's: when large, the message names
-- the value its notification stored (sqldb.StoreValue) instead of holding
-- a copy, and the sweep of stored values reads this index to know whether
-- a message still names one.
CREATE INDEX messages_overrides_values ON messages (overrides) WHERE overrides LIKE '@%';
