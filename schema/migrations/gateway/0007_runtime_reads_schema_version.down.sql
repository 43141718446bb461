REVOKE SELECT ON public.schema_migrations_gateway FROM wagerail_app, wagerail_platform;
