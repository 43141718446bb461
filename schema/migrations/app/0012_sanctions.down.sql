DROP TABLE app.sanctions_checks, app.sanctions_names, app.sanctions_entries, app.sanctions_list_versions;
DROP EXTENSION IF EXISTS pg_trgm;
