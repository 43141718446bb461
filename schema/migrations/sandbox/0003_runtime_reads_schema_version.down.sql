REVOKE SELECT ON public.schema_migrations_sandbox FROM wagerail_app, wagerail_platform;
