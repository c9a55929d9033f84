UPDATE jobs SET step = (SELECT body FROM workflow_snapshots WHERE id = jobs.step) WHERE step LIKE '#%';
UPDATE notifications SET template = (SELECT body FROM workflow_snapshots WHERE id = notifications.template) WHERE template LIKE '#%';
UPDATE notifications SET preferences = (SELECT body FROM workflow_snapshots WHERE id = notifications.preferences) WHERE preferences LIKE '#%';
DROP TABLE workflow_snapshots;
