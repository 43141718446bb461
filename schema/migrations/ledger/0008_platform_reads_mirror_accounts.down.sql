REVOKE SELECT (tenant_id, name) ON ledger.accounts FROM wagerail_platform;
REVOKE EXECUTE ON FUNCTION ledger.current_tenant() FROM wagerail_platform;
DROP POLICY platform_access ON ledger.accounts;
DROP FUNCTION ledger.cross_tenant();
REVOKE USAGE ON SCHEMA ledger FROM wagerail_platform;
