ALTER TABLE jobs ADD COLUMN controls TEXT NOT NULL DEFAULT '{}';
UPDATE jobs SET controls = coalesce(json_extract(step, '$.controlVariables'), '{}');
