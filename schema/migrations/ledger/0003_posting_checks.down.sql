-- Back to the 0002 checks: the transaction foreign key, the per-transaction shape function and
-- the deferred check of inserted transactions.
DROP TRIGGER transactions_have_entries ON ledger.transactions;
DROP FUNCTION ledger.transactions_have_entries();
DROP TRIGGER transactions_consistent ON ledger.transactions;
CREATE CONSTRAINT TRIGGER transactions_consistent AFTER INSERT OR UPDATE ON ledger.transactions
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger.transactions_consistent();
DROP INDEX ledger.transactions_reverses_once;
ALTER TABLE ledger.transactions ADD CONSTRAINT transactions_reverses_once UNIQUE (reverses_id);
ALTER TABLE ledger.transactions ADD CONSTRAINT transactions_tenant_id_currency_key UNIQUE (tenant_id, id, currency);
ALTER TABLE ledger.entries ADD CONSTRAINT entries_transaction_fkey FOREIGN KEY (tenant_id, transaction_id, currency)
    REFERENCES ledger.transactions (tenant_id, id, currency);

CREATE FUNCTION ledger.transaction_shape(txid uuid,
        OUT status text, OUT posted_n bigint, OUT hold_n bigint, OUT release_n bigint,
        OUT posted_net numeric, OUT hold_net numeric, OUT release_net numeric)
    LANGUAGE sql STABLE
    AS $$
    SELECT t.status,
           count(e.seq) FILTER (WHERE e.phase = 'POSTED'),
           count(e.seq) FILTER (WHERE e.phase = 'HOLD'),
           count(e.seq) FILTER (WHERE e.phase = 'RELEASE'),
           coalesce(sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END) FILTER (WHERE e.phase = 'POSTED'), 0),
           coalesce(sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END) FILTER (WHERE e.phase = 'HOLD'), 0),
           coalesce(sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END) FILTER (WHERE e.phase = 'RELEASE'), 0)
      FROM ledger.transactions t
      LEFT JOIN ledger.entries e ON e.transaction_id = t.id
     WHERE t.id = txid
     GROUP BY t.status
$$;

CREATE OR REPLACE FUNCTION ledger.entries_balanced() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    bad record;
BEGIN
    FOR bad IN
        SELECT n.transaction_id AS id, s.*
          FROM (SELECT DISTINCT transaction_id FROM new_entries) n
         CROSS JOIN LATERAL ledger.transaction_shape(n.transaction_id) s
         WHERE s.posted_net <> 0 OR s.hold_net <> 0 OR s.release_net <> 0
            OR NOT ledger.status_fits(s.status, s.posted_n, s.hold_n, s.release_n)
         LIMIT 1
    LOOP
        IF bad.posted_net <> 0 OR bad.hold_net <> 0 OR bad.release_net <> 0 THEN
            RAISE EXCEPTION 'ledger: transaction % is unbalanced (debits - credits: posted %, hold %, release %)',
                bad.id, bad.posted_net, bad.hold_net, bad.release_net
                USING ERRCODE = '23514', CONSTRAINT = 'entries_balanced';
        END IF;
        RAISE EXCEPTION 'ledger: entries of transaction % do not match its status %', bad.id, bad.status
            USING ERRCODE = '23514', CONSTRAINT = 'entries_match_status';
    END LOOP;
    -- a release cancels its hold exactly: same account, direction and amount
    FOR bad IN
        SELECT n.transaction_id AS id
          FROM (SELECT DISTINCT transaction_id FROM new_entries WHERE phase = 'RELEASE') n
         WHERE EXISTS (
            SELECT 1 FROM ledger.entries e
             WHERE e.transaction_id = n.transaction_id AND e.phase IN ('HOLD', 'RELEASE')
             GROUP BY e.account_id, e.direction
            HAVING sum(CASE WHEN e.phase = 'HOLD' THEN e.amount ELSE -e.amount END) <> 0)
         LIMIT 1
    LOOP
        RAISE EXCEPTION 'ledger: releases of transaction % do not match its holds', bad.id
            USING ERRCODE = '23514', CONSTRAINT = 'entries_match_status';
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION ledger.entries_sequence() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(ledger.account_lock_key(NEW.account_id));
    NEW.seq := nextval('ledger.entry_seq');
    NEW.created_at := clock_timestamp();
    RETURN NEW;
END
$$;

-- Locks accounts in a fixed order so two postings touching the same accounts never deadlock.
CREATE FUNCTION ledger.lock_accounts(accounts uuid[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    a uuid;
BEGIN
    FOR a IN SELECT DISTINCT x FROM unnest(accounts) AS x ORDER BY x LOOP
        PERFORM pg_advisory_xact_lock(ledger.account_lock_key(a));
    END LOOP;
END
$$;
