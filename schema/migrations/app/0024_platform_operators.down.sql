ALTER TABLE app.roles NO FORCE ROW LEVEL SECURITY;
UPDATE app.roles SET permissions = '{}' WHERE builtin AND name = 'organization_admin' AND scope IN ('FI', 'MERCHANT');
ALTER TABLE app.roles FORCE ROW LEVEL SECURITY;
DROP TABLE app.platform_operators;
