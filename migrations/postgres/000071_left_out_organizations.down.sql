-- Each organization left out, written out again, as a release before reads it.
UPDATE notifications SET organization_id = coalesce((SELECT e.organization_id FROM environments e
	WHERE e.id = notifications.environment_id), '') WHERE organization_id = '';
UPDATE messages SET organization_id = coalesce((SELECT e.organization_id FROM environments e
	WHERE e.id = messages.environment_id), '') WHERE organization_id = '';
