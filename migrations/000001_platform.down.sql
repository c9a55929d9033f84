DROP TABLE settings;
DROP TABLE idempotency_keys;
DROP TABLE api_keys;
DROP TABLE environments;
DROP TABLE users;
DROP TABLE organizations;
