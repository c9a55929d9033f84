DROP TABLE workflow_versions;
