REVOKE SELECT ON public.schema_migrations_app FROM wagerail_app, wagerail_platform;
