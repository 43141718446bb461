-- BNPL: a merchant's order is bought on credit once per business, but an activation that FAILED
-- (its settlement failed, the posting voided, nothing owed) no longer holds the order: the
-- customer may buy it again. The uniqueness leaves FAILED agreements out.
ALTER TABLE app.bnpl_agreements DROP CONSTRAINT bnpl_agreements_tenant_id_merchant_id_merchant_reference_key;
CREATE UNIQUE INDEX bnpl_agreements_merchant_order ON app.bnpl_agreements (tenant_id, merchant_id, merchant_reference)
    WHERE status <> 'FAILED';
