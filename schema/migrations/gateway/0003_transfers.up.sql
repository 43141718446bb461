-- The register of outbound transfers: every transfer the gateway sends to a partner is recorded
-- here, for its tenant, BEFORE the partner is called. A bank callback names only (partner,
-- reference); the register is how the API learns whose transfer it is, instead of trusting the
-- tenant the callback's body claims. It is also where a reference is bound to one body for good:
-- the same reference with another amount, account, domain or tenant is refused before it leaves.

-- True while the transaction has set app.cross_tenant = 'on' (internal/crosstenant). It opens
-- only the platform_access policies, which name wagerail_platform alone: for wagerail_app the
-- setting means nothing.
CREATE FUNCTION gateway.cross_tenant() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(current_setting('app.cross_tenant', true), '') = 'on' $$;

-- The status a transfer may move to. INITIATED: recorded, the partner's answer not known (yet, or
-- ever: a timeout). REJECTED: the partner refused this request; nothing moved, and the same body
-- may be sent again. PENDING: the partner holds it. SETTLED and FAILED are final, as the partner's
-- are. Used by the trigger below and by the store's UPDATE, so the rule is written once.
CREATE FUNCTION gateway.transfer_status_follows(old_status text, new_status text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT old_status = new_status
              OR old_status = 'INITIATED'
              OR (old_status = 'REJECTED' AND new_status IN ('PENDING', 'SETTLED', 'FAILED'))
              OR (old_status = 'PENDING' AND new_status IN ('SETTLED', 'FAILED')) $$;

CREATE TABLE gateway.transfers (
    id                  bigserial PRIMARY KEY,
    partner             text          NOT NULL CHECK (partner <> '' AND length(partner) <= 64),
    reference           text          NOT NULL CHECK (reference <> '' AND length(reference) <= 140),
    tenant_id           text          NOT NULL CHECK (tenant_id <> '' AND length(tenant_id) <= 128),
    domain              text          NOT NULL CHECK (domain ~ '^[A-Z]{1,16}$'),
    amount_santim       NUMERIC(20,0) NOT NULL CHECK (amount_santim > 0),
    currency            char(3)       NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    from_account        text          NOT NULL CHECK (from_account <> '' AND length(from_account) <= 64),
    to_account          text          NOT NULL CHECK (to_account <> '' AND length(to_account) <= 64),
    -- The bulk disbursement the transfer is an item of; NULL for a single disbursement.
    batch_reference     text          CHECK (batch_reference <> '' AND length(batch_reference) <= 140),
    status              text          NOT NULL DEFAULT 'INITIATED'
                                      CHECK (status IN ('INITIATED', 'PENDING', 'SETTLED', 'FAILED', 'REJECTED')),
    -- The partner's id of the transfer and, when FAILED or REJECTED, its code.
    partner_transfer_id text,
    failure_code        text,
    created_at          timestamptz   NOT NULL DEFAULT now(),
    updated_at          timestamptz   NOT NULL DEFAULT now(),
    CHECK (from_account <> to_account),
    -- One reference, one transfer per partner, across tenants: a partner dedupes on the
    -- reference alone, so two tenants can never share one.
    CONSTRAINT transfers_partner_reference UNIQUE (partner, reference)
);
CREATE INDEX transfers_tenant ON gateway.transfers (tenant_id, partner, created_at);
CREATE INDEX transfers_batch ON gateway.transfers (partner, batch_reference) WHERE batch_reference IS NOT NULL;

-- A recorded transfer's body never changes and its status moves only forward.
CREATE FUNCTION gateway.transfers_guard() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF (NEW.partner, NEW.reference, NEW.tenant_id, NEW.domain, NEW.amount_santim, NEW.currency, NEW.from_account,
        NEW.to_account, NEW.batch_reference, NEW.created_at)
       IS DISTINCT FROM
       (OLD.partner, OLD.reference, OLD.tenant_id, OLD.domain, OLD.amount_santim, OLD.currency, OLD.from_account,
        OLD.to_account, OLD.batch_reference, OLD.created_at) THEN
        RAISE EXCEPTION 'gateway.transfers: the body of transfer % never changes', OLD.reference
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transfers_body_immutable';
    END IF;
    IF NOT gateway.transfer_status_follows(OLD.status, NEW.status) THEN
        RAISE EXCEPTION 'gateway.transfers: transfer % cannot go from % to %', OLD.reference, OLD.status, NEW.status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transfers_status_forward';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER transfers_guard BEFORE UPDATE ON gateway.transfers
    FOR EACH ROW EXECUTE FUNCTION gateway.transfers_guard();

ALTER TABLE gateway.transfers ENABLE ROW LEVEL SECURITY;
ALTER TABLE gateway.transfers FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON gateway.transfers
    USING (tenant_id = gateway.current_tenant()) WITH CHECK (tenant_id = gateway.current_tenant());
-- The cross-tenant path, for the bank-callback handler's lookup by (partner, reference): read
-- only, and only for wagerail_platform in a transaction that set app.cross_tenant.
CREATE POLICY platform_access ON gateway.transfers TO wagerail_platform
    USING (gateway.cross_tenant()) WITH CHECK (gateway.cross_tenant());

-- The register is kept, not pruned: the runtime role records and advances transfers, never
-- deletes them.
REVOKE DELETE, TRUNCATE ON gateway.transfers FROM wagerail_app;

GRANT USAGE ON SCHEMA gateway TO wagerail_platform;
GRANT EXECUTE ON FUNCTION gateway.current_tenant(), gateway.cross_tenant() TO wagerail_platform;
GRANT SELECT ON gateway.transfers TO wagerail_platform;
