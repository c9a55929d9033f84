-- PostgreSQL's twin of this migration has autovacuum come sooner for the
-- tables retention sweeps. SQLite needs nothing: a deleted row's page is
-- free at once, and the next inserts take it (docs/retention.md).
SELECT 1;
