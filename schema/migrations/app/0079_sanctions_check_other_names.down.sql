ALTER TABLE app.sanctions_checks DROP COLUMN other_names;
