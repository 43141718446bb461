REVOKE SELECT ON public.schema_migrations_ledger FROM wagerail_app, wagerail_platform;
