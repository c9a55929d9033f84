DROP INDEX messages_overrides_values;
