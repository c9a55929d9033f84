DROP TABLE console_links;
DROP INDEX console_sessions_user;
DROP TABLE console_sessions;
DROP TABLE console_users;
