-- A runtime process refuses to start on a database whose gateway schema is older than the code it
-- runs, or half-migrated (cmd/wagerail openRuntimeDB): the runtime roles may read the version
-- golang-migrate records, and nothing else of its table is theirs.
GRANT SELECT ON public.schema_migrations_gateway TO wagerail_app, wagerail_platform;
