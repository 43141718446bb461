-- Money bounds, transactions between accounts, and checkpoints that only the ledger writes.
--
-- The bounds are internal/money's: an entry at most MaxAmountSantim (1e12), a transaction's
-- debits at most MaxTransactionSantim (1e13), and each running total of an account at most
-- MaxAccountTotalSantim (1e18). Balance reads sum an account's entries into int64: without the
-- account bound, enough large postings made every later read of the account fail, for good
-- (entries are append-only). The Go validator refuses the first two before any write; the
-- database refuses all three whoever writes, so no writer can go around them.

-- An entry is at most MaxAmountSantim. A second constraint on the domain, so a zero or negative
-- amount is still santim_check and a too large one names its own rule.
ALTER DOMAIN ledger.santim ADD CONSTRAINT santim_max_check CHECK (VALUE <= 1000000000000);

-- The statement check of 0003 also refuses a transaction whose debits (per phase) exceed
-- MaxTransactionSantim (entries_transaction_max) and one whose entries all touch one account
-- (entries_one_account): a transaction moves money between accounts. min = max of the account
-- ids tells one account from several without a sort per transaction (count(DISTINCT) sorts).
CREATE OR REPLACE FUNCTION ledger.entries_balanced() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    s record;
BEGIN
    FOR s IN
        SELECT n.id, x.*
          FROM (SELECT DISTINCT transaction_id AS id FROM new_entries) n
          LEFT JOIN LATERAL (
            SELECT t.status, t.currency,
                   count(e.seq) FILTER (WHERE e.tenant_id <> t.tenant_id OR e.currency <> t.currency) AS foreign_n,
                   count(e.seq) FILTER (WHERE e.phase = 'POSTED') AS posted_n,
                   count(e.seq) FILTER (WHERE e.phase = 'HOLD') AS hold_n,
                   count(e.seq) FILTER (WHERE e.phase = 'RELEASE') AS release_n,
                   coalesce(sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END) FILTER (WHERE e.phase = 'POSTED'), 0) AS posted_net,
                   coalesce(sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END) FILTER (WHERE e.phase = 'HOLD'), 0) AS hold_net,
                   coalesce(sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END) FILTER (WHERE e.phase = 'RELEASE'), 0) AS release_net,
                   greatest(coalesce(sum(e.amount) FILTER (WHERE e.direction = 'DEBIT' AND e.phase = 'POSTED'), 0),
                            coalesce(sum(e.amount) FILTER (WHERE e.direction = 'DEBIT' AND e.phase = 'HOLD'), 0)) AS debits,
                   min(e.account_id::text) = max(e.account_id::text) AS one_account
              FROM ledger.transactions t
              LEFT JOIN ledger.entries e ON e.transaction_id = t.id
             WHERE t.id = n.id
             GROUP BY t.id) x ON true
         WHERE x.status IS NULL OR x.foreign_n > 0
            OR x.posted_net <> 0 OR x.hold_net <> 0 OR x.release_net <> 0
            OR x.debits > 10000000000000 OR x.one_account
            OR NOT ledger.status_fits(x.status, x.posted_n, x.hold_n, x.release_n)
            OR (x.release_n > 0 AND EXISTS (
                -- a release cancels its hold exactly: same account, direction and amount
                SELECT 1 FROM ledger.entries e
                 WHERE e.transaction_id = n.id AND e.phase IN ('HOLD', 'RELEASE')
                 GROUP BY e.account_id, e.direction
                HAVING sum(CASE WHEN e.phase = 'HOLD' THEN e.amount ELSE -e.amount END) <> 0))
         LIMIT 1
    LOOP
        IF s.status IS NULL THEN
            RAISE EXCEPTION 'ledger: transaction % does not exist for this tenant', s.id
                USING ERRCODE = '23503', CONSTRAINT = 'entries_transaction_fkey';
        END IF;
        IF s.foreign_n > 0 THEN
            RAISE EXCEPTION 'ledger: entries of transaction % are not all of its tenant and currency %', s.id, s.currency
                USING ERRCODE = '23503', CONSTRAINT = 'entries_transaction_fkey';
        END IF;
        IF s.posted_net <> 0 OR s.hold_net <> 0 OR s.release_net <> 0 THEN
            RAISE EXCEPTION 'ledger: transaction % is unbalanced (debits - credits: posted %, hold %, release %)',
                s.id, s.posted_net, s.hold_net, s.release_net
                USING ERRCODE = '23514', CONSTRAINT = 'entries_balanced';
        END IF;
        IF s.debits > 10000000000000 THEN
            RAISE EXCEPTION 'ledger: debits of transaction % are % santim, more than 10000000000000', s.id, s.debits
                USING ERRCODE = '23514', CONSTRAINT = 'entries_transaction_max';
        END IF;
        IF s.one_account THEN
            RAISE EXCEPTION 'ledger: entries of transaction % all touch one account', s.id
                USING ERRCODE = '23514', CONSTRAINT = 'entries_one_account';
        END IF;
        IF NOT ledger.status_fits(s.status, s.posted_n, s.hold_n, s.release_n) THEN
            RAISE EXCEPTION 'ledger: entries of transaction % do not match its status %', s.id, s.status
                USING ERRCODE = '23514', CONSTRAINT = 'entries_match_status';
        END IF;
        RAISE EXCEPTION 'ledger: releases of transaction % do not match its holds', s.id
            USING ERRCODE = '23514', CONSTRAINT = 'entries_match_status';
    END LOOP;
    RETURN NULL;
END
$$;

-- Account totals --------------------------------------------------------------------------------

-- Each account's running totals: its debits and its credits, posted or held, less the holds
-- released (debits = posted debits + open debit holds; credits likewise). A balance read sums
-- each of the four parts; each part is at most its total, so each fits int64, and so do the
-- derived balances (|posted| <= 1e18, |pending| <= 2e18). Posted sums only grow, so every
-- earlier prefix (a checkpoint, an as-of read, the tail after a checkpoint) is bounded as well.
-- A commit moves a hold into the posted part and leaves the total as it is, so a hold that was
-- accepted can always be committed; a void lowers it.
CREATE DOMAIN ledger.account_total AS numeric(20, 0)
    CONSTRAINT account_total_max CHECK (VALUE >= 0 AND VALUE <= 1000000000000000000);

-- The columns are plain numbers and the trigger casts each new total to the domain: the upsert
-- below proposes a statement's change as a row, and a void's change is negative.
CREATE TABLE ledger.account_totals (
    account_id uuid PRIMARY KEY,
    tenant_id  text NOT NULL,
    debits     numeric(20, 0) NOT NULL,
    credits    numeric(20, 0) NOT NULL
);

-- Backfill from the entries written so far. The owner is subject to the forced row-level
-- security like everyone else, so for this one statement it is not forced (the migration runs
-- in one transaction: nobody sees the table unforced). An account already past the bound fails
-- the migration: its balance reads fail already, and that needs a person, not a migration.
ALTER TABLE ledger.entries NO FORCE ROW LEVEL SECURITY;
INSERT INTO ledger.account_totals (account_id, tenant_id, debits, credits)
SELECT e.account_id, min(e.tenant_id),
       coalesce(sum(CASE WHEN e.phase = 'RELEASE' THEN -e.amount ELSE e.amount END) FILTER (WHERE e.direction = 'DEBIT'), 0)::ledger.account_total,
       coalesce(sum(CASE WHEN e.phase = 'RELEASE' THEN -e.amount ELSE e.amount END) FILTER (WHERE e.direction = 'CREDIT'), 0)::ledger.account_total
  FROM ledger.entries e
 GROUP BY e.account_id;
ALTER TABLE ledger.entries FORCE ROW LEVEL SECURITY;

ALTER TABLE ledger.account_totals ENABLE ROW LEVEL SECURITY;
ALTER TABLE ledger.account_totals FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ledger.account_totals
    USING (tenant_id = ledger.current_tenant()) WITH CHECK (tenant_id = ledger.current_tenant());
-- The runtime role may read its totals; only the trigger below writes them (as the owner), so
-- no statement of the runtime role can reset a total to get past the bound.
REVOKE ALL ON ledger.account_totals FROM wagerail_app;
GRANT SELECT ON ledger.account_totals TO wagerail_app;

-- Adds each statement's entries to their accounts' totals; the domain refuses a total past the
-- bound (account_total_max), and with it the whole statement. A proposed change that is not
-- negative is checked as it is proposed too: on an account's first statement it is the total.
-- It runs after the entries
-- trigger has taken every touched account's lock (held to commit), so concurrent postings on
-- an account add up one after the other, and no two statements wait on each other's rows here.
-- One upsert per statement, not per entry.
CREATE FUNCTION ledger.entries_totals() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    INSERT INTO ledger.account_totals AS a (account_id, tenant_id, debits, credits)
    SELECT d.account_id, d.tenant_id,
           CASE WHEN d.debits >= 0 THEN d.debits::ledger.account_total ELSE d.debits END,
           CASE WHEN d.credits >= 0 THEN d.credits::ledger.account_total ELSE d.credits END
      FROM (SELECT n.account_id, min(n.tenant_id) AS tenant_id,
                   coalesce(sum(CASE WHEN n.phase = 'RELEASE' THEN -n.amount ELSE n.amount END) FILTER (WHERE n.direction = 'DEBIT'), 0) AS debits,
                   coalesce(sum(CASE WHEN n.phase = 'RELEASE' THEN -n.amount ELSE n.amount END) FILTER (WHERE n.direction = 'CREDIT'), 0) AS credits
              FROM new_entries n
             GROUP BY n.account_id) d
    ON CONFLICT (account_id) DO UPDATE
        SET debits = (a.debits + excluded.debits)::ledger.account_total,
            credits = (a.credits + excluded.credits)::ledger.account_total;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION ledger.entries_totals() FROM PUBLIC;

-- Named to fire after entries_balanced (statement triggers fire in name order): a posting that
-- is wrong in itself is refused for that first.
CREATE TRIGGER entries_totals AFTER INSERT ON ledger.entries
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.entries_totals();

-- Checkpoints -----------------------------------------------------------------------------------

-- The sums of an account's entries after a sequence number (up to as_of when given): the one
-- definition that balance reads (ledger/store_balance.go) and write_checkpoint share, so a checkpoint
-- always holds exactly what a read would have summed. A plain SQL function, which Postgres inlines
-- into the calling query, so the entries index is used as if the query were written out. Callers
-- pass plain columns through LATERAL: a sub-select argument stops the inlining, and an expression
-- (coalesce) is not leakproof, so row-level security would keep it out of the index condition.
CREATE FUNCTION ledger.entry_sums(account uuid, after_seq bigint, as_of timestamptz)
    RETURNS TABLE (n bigint, max_seq bigint, last_at timestamptz, pd numeric, pc numeric, hd numeric, hc numeric)
    LANGUAGE sql STABLE
    AS $$
    SELECT count(*), coalesce(max(e.seq), 0), max(e.created_at),
           coalesce(sum(e.amount) FILTER (WHERE e.phase = 'POSTED' AND e.direction = 'DEBIT'), 0),
           coalesce(sum(e.amount) FILTER (WHERE e.phase = 'POSTED' AND e.direction = 'CREDIT'), 0),
           coalesce(sum(CASE WHEN e.phase = 'HOLD' THEN e.amount ELSE -e.amount END)
               FILTER (WHERE e.phase <> 'POSTED' AND e.direction = 'DEBIT'), 0),
           coalesce(sum(CASE WHEN e.phase = 'HOLD' THEN e.amount ELSE -e.amount END)
               FILTER (WHERE e.phase <> 'POSTED' AND e.direction = 'CREDIT'), 0)
      FROM ledger.entries e
     WHERE e.account_id = account
       AND e.seq > after_seq
       AND (as_of IS NULL OR e.created_at <= as_of)
$$;

-- Balance reads trust the newest checkpoint, so the runtime role may no longer write one: it
-- asks this function, which computes the sums itself (the account's newest checkpoint plus its
-- entries after it, in one statement, so from one snapshot in which the account's entries are a
-- gap-free prefix; see account_lock_key). It runs as the owner, to whom the forced row-level
-- security applies as to the caller: it sees, and so checkpoints, only accounts of the tenant of
-- the caller's transaction, and the policy's WITH CHECK keeps the row in that tenant. Returns
-- whether a checkpoint was written (not when the account has no entry past its newest one, is
-- not the tenant's, or a concurrent call wrote the same one).
CREATE FUNCTION ledger.write_checkpoint(account uuid) RETURNS boolean
    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    WITH acc AS (
        SELECT a.id, a.tenant_id, a.currency FROM ledger.accounts a WHERE a.id = account
    ), cp AS (
        SELECT c.seq, c.entry_count, c.posted_debits, c.posted_credits, c.pending_debits, c.pending_credits
          FROM ledger.balance_checkpoints c
         WHERE c.account_id = (SELECT acc.id FROM acc)
         ORDER BY c.seq DESC LIMIT 1
    ), tail AS (
        SELECT s.* FROM acc, (SELECT coalesce(max(cp.seq), 0) AS seq FROM cp) done
         CROSS JOIN LATERAL ledger.entry_sums(acc.id, done.seq, NULL) s
    ), written AS (
        INSERT INTO ledger.balance_checkpoints (tenant_id, account_id, currency, seq, entry_count, last_entry_at,
            posted_debits, posted_credits, pending_debits, pending_credits)
        SELECT acc.tenant_id, acc.id, acc.currency, tail.max_seq, coalesce(cp.entry_count, 0) + tail.n, tail.last_at,
               coalesce(cp.posted_debits, 0) + tail.pd, coalesce(cp.posted_credits, 0) + tail.pc,
               coalesce(cp.pending_debits, 0) + tail.hd, coalesce(cp.pending_credits, 0) + tail.hc
          FROM acc CROSS JOIN tail LEFT JOIN cp ON true
         WHERE tail.n > 0
        ON CONFLICT DO NOTHING
        RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM written)
$$;
REVOKE ALL ON FUNCTION ledger.write_checkpoint(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.write_checkpoint(uuid) TO wagerail_app;

REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ledger.balance_checkpoints FROM wagerail_app;
