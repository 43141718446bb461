-- Back to the CHECK constraints of 0002 and the statement check of 0003.
DROP TRIGGER transactions_check_reversal ON ledger.transactions;
DROP FUNCTION ledger.transactions_check_reversal();

DROP TRIGGER transactions_inserted ON ledger.transactions;
DROP FUNCTION ledger.transactions_inserted();
CREATE FUNCTION ledger.transactions_have_entries() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    bad record;
BEGIN
    SELECT n.id, n.status INTO bad
      FROM new_transactions n
     CROSS JOIN LATERAL (
        SELECT count(*) AS c FROM (SELECT 1 FROM ledger.entries e WHERE e.transaction_id = n.id LIMIT 1) z) x
     WHERE x.c = 0
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'ledger: entries of transaction % do not match its status % (none were inserted with it)', bad.id, bad.status
            USING ERRCODE = '23514', CONSTRAINT = 'entries_match_status',
                  HINT = 'insert a transaction and its entries in one statement';
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER transactions_have_entries AFTER INSERT ON ledger.transactions
    REFERENCING NEW TABLE AS new_transactions
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.transactions_have_entries();

DROP POLICY tenant_isolation ON ledger.transactions;
ALTER TABLE ledger.transactions
    ALTER COLUMN tenant_id TYPE text,
    ALTER COLUMN idempotency_key TYPE text,
    ALTER COLUMN request_hash TYPE bytea,
    ALTER COLUMN kind TYPE text,
    ALTER COLUMN status TYPE text,
    ALTER COLUMN currency TYPE text,
    ALTER COLUMN metadata TYPE jsonb;
CREATE POLICY tenant_isolation ON ledger.transactions
    USING (tenant_id = ledger.current_tenant()) WITH CHECK (tenant_id = ledger.current_tenant());
ALTER TABLE ledger.entries
    ALTER COLUMN phase TYPE text,
    ALTER COLUMN direction TYPE text,
    ALTER COLUMN amount TYPE numeric(20, 0);

ALTER TABLE ledger.transactions
    ADD CONSTRAINT transactions_tenant_id_check CHECK (tenant_id <> '' AND length(tenant_id) <= 128),
    ADD CONSTRAINT transactions_idempotency_key_check CHECK (idempotency_key <> '' AND length(idempotency_key) <= 255),
    ADD CONSTRAINT transactions_request_hash_check CHECK (length(request_hash) = 32),
    ADD CONSTRAINT transactions_kind_check CHECK (kind IN ('STANDARD', 'REVERSAL', 'ADJUSTMENT')),
    ADD CONSTRAINT transactions_status_check CHECK (status IN ('PENDING', 'POSTED', 'VOIDED', 'REVERSED')),
    ADD CONSTRAINT transactions_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
    ADD CONSTRAINT transactions_metadata_check CHECK (jsonb_typeof(metadata) = 'object'),
    ADD CONSTRAINT transactions_reversal_shape CHECK (
        (kind = 'REVERSAL') = (reverses_id IS NOT NULL)
        AND (kind <> 'REVERSAL' OR status = 'POSTED')),
    ADD CONSTRAINT transactions_adjustment_shape CHECK (
        kind <> 'ADJUSTMENT' OR (
            status IN ('POSTED', 'REVERSED')
            AND coalesce(adjustment_source, '') <> '' AND coalesce(adjustment_reason, '') <> ''
            AND coalesce(approved_by, '') <> '' AND coalesce(requested_by, '') <> ''
            AND approved_by <> requested_by));
ALTER TABLE ledger.entries
    ADD CONSTRAINT entries_phase_check CHECK (phase IN ('POSTED', 'HOLD', 'RELEASE')),
    ADD CONSTRAINT entries_direction_check CHECK (direction IN ('DEBIT', 'CREDIT')),
    ADD CONSTRAINT entries_amount_check CHECK (amount > 0);

DROP DOMAIN ledger.tenant_text, ledger.key_text, ledger.sha256, ledger.currency_code, ledger.json_object,
    ledger.transaction_kind, ledger.transaction_status, ledger.entry_phase, ledger.entry_direction, ledger.santim;
