-- Each value left out, written out again, as a release before reads it.
UPDATE notifications SET actor = '{"type":"none","data":null}' WHERE actor = '';
UPDATE notifications SET updated_at = created_at WHERE updated_at = '';
UPDATE messages SET actor = '{"type":"none","data":null}' WHERE actor = '';
UPDATE messages SET cta = '{"data":{},"type":"redirect"}' WHERE cta = '';
UPDATE messages SET updated_at = created_at WHERE updated_at = '';
UPDATE messages SET delivered_at = '["' || created_at || '"]' WHERE delivered_at = '';
