DROP INDEX message_payloads_values;
DROP INDEX notifications_template_values;
DROP INDEX notifications_overrides_values;
DROP INDEX notifications_payload_values;
DROP TABLE stored_values;
