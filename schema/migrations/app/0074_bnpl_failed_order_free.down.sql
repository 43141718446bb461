-- Fails while an order has both a FAILED agreement and a later one: resolve those first.
DROP INDEX app.bnpl_agreements_merchant_order;
ALTER TABLE app.bnpl_agreements ADD CONSTRAINT bnpl_agreements_tenant_id_merchant_id_merchant_reference_key
    UNIQUE (tenant_id, merchant_id, merchant_reference);
