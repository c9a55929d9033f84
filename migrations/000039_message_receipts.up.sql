-- A provider's delivery receipt names the message by the provider's own
-- id (docs/webhooks.md, "Receipts from providers"); receipt_status is the
-- last state a receipt reported.
ALTER TABLE messages ADD COLUMN provider_message_id TEXT;
ALTER TABLE messages ADD COLUMN receipt_status TEXT;
CREATE INDEX messages_provider_message ON messages (environment_id, provider_message_id) WHERE provider_message_id IS NOT NULL;
