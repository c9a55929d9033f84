ALTER TABLE notifications RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, vacuum_truncate);
ALTER TABLE jobs RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, vacuum_truncate);
ALTER TABLE execution_details RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, vacuum_truncate);
ALTER TABLE notification_contexts RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, vacuum_truncate);
ALTER TABLE notification_topics RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, vacuum_truncate);
ALTER TABLE activity_transactions RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, vacuum_truncate);
ALTER TABLE messages RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, vacuum_truncate);
ALTER TABLE message_payloads RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, vacuum_truncate);
