-- A key voided before any transaction held it refuses every later posting under it.
--
-- A saga whose posting step ended without an answer (its retries ran out while the ledger or the
-- network was down) voids whatever holds the step's idempotency key, and ends. When the ledger
-- had not yet written the posting — a request delayed in transit, a statement not yet granted its
-- account's lock when its caller gave up — there was nothing to void, and the posting could still
-- land a moment later: a hold no saga names, lowering its account for good. Now a void by key
-- that finds no transaction records the key here, and the insert of a transaction under a
-- recorded key is skipped (the ledger answers KEY_VOIDED).
--
-- The void and the insert serialise on an advisory lock of the (tenant, key) pair, in the
-- two-integer key space (which never meets the account locks' bigint one): the insert takes it
-- shared in its row trigger and then reads this table with a fresh snapshot (a volatile
-- function's statements each take one), the void takes it exclusive before it reads the
-- transactions. So either the void waits for an insert in flight and finds its transaction, or
-- the insert waits for the void and finds the key here. The void holds no other lock while it
-- waits or is waited for, so neither can deadlock.
CREATE TABLE ledger.voided_keys (
    tenant_id       ledger.tenant_text NOT NULL,
    idempotency_key ledger.key_text NOT NULL,
    reason          text NOT NULL DEFAULT '' CHECK (length(reason) <= 1024),
    voided_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, idempotency_key)
);
ALTER TABLE ledger.voided_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE ledger.voided_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ledger.voided_keys
    USING (tenant_id = ledger.current_tenant()) WITH CHECK (tenant_id = ledger.current_tenant());
-- A voided key stays voided.
REVOKE ALL ON ledger.voided_keys FROM wagerail_app;
GRANT SELECT, INSERT ON ledger.voided_keys TO wagerail_app;
CREATE TRIGGER voided_keys_append_only BEFORE UPDATE OR DELETE ON ledger.voided_keys
    FOR EACH ROW EXECUTE FUNCTION ledger.refuse_change();
CREATE TRIGGER voided_keys_no_truncate BEFORE TRUNCATE ON ledger.voided_keys
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_change();

-- The lock of a (tenant, key) pair: key1 names the kind of lock, key2 the pair.
CREATE FUNCTION ledger.key_lock_class() RETURNS integer
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT 1801 $$;
CREATE FUNCTION ledger.key_lock_key(tenant text, key text) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT hashtext(tenant || chr(31) || key) $$;

CREATE FUNCTION ledger.transactions_key_not_voided() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(ledger.key_lock_class(), ledger.key_lock_key(NEW.tenant_id, NEW.idempotency_key));
    IF EXISTS (SELECT 1 FROM ledger.voided_keys v
                WHERE v.tenant_id = NEW.tenant_id AND v.idempotency_key = NEW.idempotency_key) THEN
        RETURN NULL; -- skipped: the caller finds the key voided
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER transactions_key_not_voided BEFORE INSERT ON ledger.transactions
    FOR EACH ROW EXECUTE FUNCTION ledger.transactions_key_not_voided();
