-- Each payload kept in a message's row, kept once for its notification
-- again, as a release before reads it.
INSERT INTO message_payloads (notification_id, payload)
	SELECT notification_id, min(payload) FROM messages WHERE payload <> '' GROUP BY notification_id
	ON CONFLICT (notification_id) DO NOTHING;
ALTER TABLE messages DROP COLUMN payload;
