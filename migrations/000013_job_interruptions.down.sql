ALTER TABLE jobs DROP COLUMN interruptions;
