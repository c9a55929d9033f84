DROP INDEX receipt_tokens_seen;
DROP TABLE receipt_tokens;
