DROP INDEX workflows_list;
DROP INDEX workflows_identifier;
DROP TABLE workflows;
DROP TABLE notification_groups;
