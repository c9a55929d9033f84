DROP INDEX notifications_severity;
