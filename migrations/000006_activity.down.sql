DROP TABLE execution_details;
DROP TABLE jobs;
DROP TABLE notifications;
DROP TABLE activity_transactions;
