DROP INDEX messages_provider_message;
ALTER TABLE messages DROP COLUMN receipt_status;
ALTER TABLE messages DROP COLUMN provider_message_id;
