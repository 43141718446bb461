-- Back to 0004: the runtime role writes checkpoints itself, no account totals, no bounds on
-- amounts in the database, and the statement check of 0003.
DROP FUNCTION ledger.write_checkpoint(uuid);
DROP FUNCTION ledger.entry_sums(uuid, bigint, timestamptz);
GRANT INSERT ON ledger.balance_checkpoints TO wagerail_app;

DROP TRIGGER entries_totals ON ledger.entries;
DROP FUNCTION ledger.entries_totals();
DROP TABLE ledger.account_totals;
DROP DOMAIN ledger.account_total;

CREATE OR REPLACE FUNCTION ledger.entries_balanced() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    s record;
BEGIN
    -- One query for the whole statement. The per-transaction part is a grouped LATERAL
    -- subquery, which the planner cannot flatten into a join: it runs once per transaction as
    -- a primary-key read of the transaction and an index read of its entries, whatever the
    -- statistics say.
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
                   coalesce(sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END) FILTER (WHERE e.phase = 'RELEASE'), 0) AS release_net
              FROM ledger.transactions t
              LEFT JOIN ledger.entries e ON e.transaction_id = t.id
             WHERE t.id = n.id
             GROUP BY t.id) x ON true
         WHERE x.status IS NULL OR x.foreign_n > 0
            OR x.posted_net <> 0 OR x.hold_net <> 0 OR x.release_net <> 0
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

ALTER DOMAIN ledger.santim DROP CONSTRAINT santim_max_check;
