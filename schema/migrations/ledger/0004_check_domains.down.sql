-- Back to the CHECK constraints of 0002 and the statement check of 0003.
CREATE OR REPLACE FUNCTION ledger.transactions_guard() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'ledger.transactions: DELETE is not allowed' USING ERRCODE = 'P0001';
    END IF;
    IF (OLD.id, OLD.tenant_id, OLD.idempotency_key, OLD.request_hash, OLD.kind, OLD.currency,
        OLD.metadata, OLD.workflow_id, OLD.run_id, OLD.step, OLD.reverses_id, OLD.reversal_reason,
        OLD.adjustment_source, OLD.adjustment_reason, OLD.approved_by, OLD.requested_by, OLD.created_at)
       IS DISTINCT FROM
       (NEW.id, NEW.tenant_id, NEW.idempotency_key, NEW.request_hash, NEW.kind, NEW.currency,
        NEW.metadata, NEW.workflow_id, NEW.run_id, NEW.step, NEW.reverses_id, NEW.reversal_reason,
        NEW.adjustment_source, NEW.adjustment_reason, NEW.approved_by, NEW.requested_by, NEW.created_at) THEN
        RAISE EXCEPTION 'ledger.transactions: only the status of a transaction may change' USING ERRCODE = 'P0001';
    END IF;
    IF NOT ((OLD.status = 'PENDING' AND NEW.status IN ('POSTED', 'VOIDED'))
            OR (OLD.status = 'POSTED' AND NEW.status = 'REVERSED')) THEN
        RAISE EXCEPTION 'ledger.transactions: status % -> % is not allowed', OLD.status, NEW.status
            USING ERRCODE = 'P0001';
    END IF;
    IF (OLD.posted_at IS NOT NULL AND NEW.posted_at IS DISTINCT FROM OLD.posted_at)
       OR (OLD.voided_at IS NOT NULL AND NEW.voided_at IS DISTINCT FROM OLD.voided_at)
       OR (OLD.void_reason IS NOT NULL AND NEW.void_reason IS DISTINCT FROM OLD.void_reason)
       OR (OLD.reversed_at IS NOT NULL AND NEW.reversed_at IS DISTINCT FROM OLD.reversed_at) THEN
        RAISE EXCEPTION 'ledger.transactions: recorded times are immutable' USING ERRCODE = 'P0001';
    END IF;
    IF NEW.status = 'REVERSED' AND NOT EXISTS (
        SELECT 1 FROM ledger.transactions r WHERE r.reverses_id = NEW.id) THEN
        RAISE EXCEPTION 'ledger.transactions: % is marked reversed without a reversal', NEW.id
            USING ERRCODE = 'P0001';
    END IF;
    RETURN NEW;
END
$$;

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
