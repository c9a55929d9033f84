DROP INDEX messages_failed;
