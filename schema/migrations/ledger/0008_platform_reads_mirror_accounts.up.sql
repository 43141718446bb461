-- The daily reconciliation finds every tenant and partner to reconcile on the audited
-- cross-tenant path (reconcile.FindPairs, as wagerail_platform). The gateway's transfer register
-- names only the partner a transfer was sent from; a mirror account that only receives (the
-- escrow of savings deposits sent from the saver's bank at another partner) appears there under
-- no transfer, and its partner was never reconciled while the run counted as a success. The
-- ledger's partner-bank mirror accounts name every such pair: the platform role may read which
-- tenant has an account of which name, and nothing else of the ledger.

-- True while the transaction has set app.cross_tenant = 'on' (internal/crosstenant). It opens
-- only the platform_access policy below, which names wagerail_platform alone.
CREATE FUNCTION ledger.cross_tenant() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(current_setting('app.cross_tenant', true), '') = 'on' $$;

CREATE POLICY platform_access ON ledger.accounts FOR SELECT TO wagerail_platform
    USING (ledger.cross_tenant());

GRANT USAGE ON SCHEMA ledger TO wagerail_platform;
GRANT EXECUTE ON FUNCTION ledger.current_tenant(), ledger.cross_tenant() TO wagerail_platform;
GRANT SELECT (tenant_id, name) ON ledger.accounts TO wagerail_platform;
