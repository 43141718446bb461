-- Merchant callbacks (issue 29, POST /api/integration/merchant-callback/<partner>): what a
-- merchant's partner reports about a BNPL order (delivered, refunded, cancelled), signed as the
-- bank callbacks are (package callbacksig) and kept verbatim, once per (partner, event id). The
-- nonce is claimed in app.bank_webhook_nonces, the one table of every signed callback route.
--
-- tenant_id is the agreement's business once the callback matched an agreement of the merchant it
-- names at the partner it came through; NULL (UNMATCHED, with the reason) otherwise: such a row is
-- no tenant's and changes nothing. The receipt runs in a cross-tenant transaction (platform role):
-- until the agreement is looked up nobody knows whose it is.
CREATE TABLE app.bnpl_merchant_callbacks (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partner            text NOT NULL CHECK (partner ~ '^[a-z0-9_-]{1,64}$'),
    event_id           text NOT NULL CHECK (event_id <> '' AND length(event_id) <= 128),
    nonce              text NOT NULL CHECK (nonce <> '' AND length(nonce) <= 128),
    merchant_id        text NOT NULL CHECK (merchant_id <> '' AND length(merchant_id) <= 128),
    agreement_id       text NOT NULL CHECK (agreement_id <> '' AND length(agreement_id) <= 128),
    merchant_reference text NOT NULL CHECK (merchant_reference ~ '^[A-Za-z0-9._-]{1,64}$'),
    kind               text NOT NULL CHECK (kind IN ('DELIVERED', 'REFUNDED', 'CANCELLED')),
    tenant_id          text REFERENCES app.organizations (id),
    outcome            text NOT NULL CHECK (outcome IN ('RECORDED', 'UNMATCHED')),
    match_problem      text CHECK (length(match_problem) <= 200),
    raw_body           bytea NOT NULL,
    signed_at          timestamptz NOT NULL,
    received_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT bnpl_merchant_callbacks_event UNIQUE (partner, event_id),
    CHECK ((outcome = 'RECORDED') = (tenant_id IS NOT NULL)),
    CHECK ((outcome = 'UNMATCHED') = (match_problem IS NOT NULL))
);
CREATE INDEX bnpl_merchant_callbacks_agreement ON app.bnpl_merchant_callbacks (tenant_id, agreement_id, id);
ALTER TABLE app.bnpl_merchant_callbacks ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.bnpl_merchant_callbacks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.bnpl_merchant_callbacks
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
-- A received callback is a fact: written once, never changed.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON app.bnpl_merchant_callbacks FROM wagerail_app;
GRANT SELECT, INSERT ON app.bnpl_merchant_callbacks TO wagerail_platform;
CREATE POLICY platform_access ON app.bnpl_merchant_callbacks TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
