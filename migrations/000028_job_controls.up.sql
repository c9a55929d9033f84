-- A job's control values (a step's templates: an email's whole body) were
-- stored twice, in controls and in its step snapshot's controlVariables,
-- which chain.go builds from the same values. The claim reads them from
-- the snapshot now (controlsColumn in activity/queue.go).
ALTER TABLE jobs DROP COLUMN controls;
