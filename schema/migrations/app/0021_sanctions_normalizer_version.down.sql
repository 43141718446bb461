REVOKE UPDATE (normalized) ON app.sanctions_names FROM wagerail_platform;
REVOKE UPDATE (normalized_name) ON app.sanctions_entries FROM wagerail_platform;
ALTER TABLE app.sanctions_checks DROP COLUMN review_reason;
ALTER TABLE app.sanctions_checks DROP COLUMN normalizer_version;
ALTER TABLE app.sanctions_list_versions DROP COLUMN normalizer_version;
