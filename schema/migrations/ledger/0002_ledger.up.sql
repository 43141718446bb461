-- The double-entry ledger: accounts, transactions, append-only entries and immutable balance
-- checkpoints. The database itself keeps the money invariants, not only the Go code:
--   * entries and checkpoints can be inserted but never updated, deleted or truncated (triggers,
--     and the runtime role holds no such privilege);
--   * every transaction balances per phase at commit (deferred constraint trigger), and its
--     entries agree with its status;
--   * an entry's account and transaction belong to the entry's tenant and currency (composite
--     foreign keys), so cross-tenant and mixed-currency postings are refused;
--   * a transaction's status only moves PENDING -> POSTED, PENDING -> VOIDED, POSTED -> REVERSED,
--     and a transaction is reversed at most once (unique reverses_id);
--   * row-level security, FORCED, on every table.

-- Lock key of an account: postings hold it from the insert of an entry on the account until
-- commit. Entry sequence numbers are drawn after the lock is taken, so per account the sequence
-- follows commit order and any snapshot sees a gap-free prefix of the account's entries: that is
-- what makes a checkpoint (a sum up to a sequence number) valid forever.
CREATE FUNCTION ledger.account_lock_key(account uuid) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT hashtextextended(account::text, 4815162342) $$;

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

CREATE FUNCTION ledger.refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'ledger.%: % is not allowed, rows are append-only', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'P0001', HINT = 'post a reversal or an adjustment instead';
END
$$;

-- Accounts -------------------------------------------------------------------------------------

CREATE TABLE ledger.accounts (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id   text NOT NULL CHECK (tenant_id <> '' AND length(tenant_id) <= 128),
    name        text NOT NULL CHECK (name <> '' AND length(name) <= 255),
    type        text NOT NULL CHECK (type IN ('ASSET', 'LIABILITY', 'INCOME', 'EXPENSE', 'EQUITY')),
    normal_side text NOT NULL GENERATED ALWAYS AS
        (CASE WHEN type IN ('ASSET', 'EXPENSE') THEN 'DEBIT' ELSE 'CREDIT' END) STORED,
    currency    text NOT NULL DEFAULT 'ETB' CHECK (currency ~ '^[A-Z]{3}$'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT accounts_tenant_name_key UNIQUE (tenant_id, name),
    CONSTRAINT accounts_tenant_id_currency_key UNIQUE (tenant_id, id, currency)
);

CREATE TRIGGER accounts_append_only BEFORE UPDATE OR DELETE ON ledger.accounts
    FOR EACH ROW EXECUTE FUNCTION ledger.refuse_change();
CREATE TRIGGER accounts_no_truncate BEFORE TRUNCATE ON ledger.accounts
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_change();

-- Transactions ---------------------------------------------------------------------------------

CREATE TABLE ledger.transactions (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id         text NOT NULL CHECK (tenant_id <> '' AND length(tenant_id) <= 128),
    idempotency_key   text NOT NULL CHECK (idempotency_key <> '' AND length(idempotency_key) <= 255),
    -- SHA-256 of the canonical content, to tell a replay from a conflicting reuse of the key
    request_hash      bytea NOT NULL CHECK (length(request_hash) = 32),
    kind              text NOT NULL CHECK (kind IN ('STANDARD', 'REVERSAL', 'ADJUSTMENT')),
    status            text NOT NULL CHECK (status IN ('PENDING', 'POSTED', 'VOIDED', 'REVERSED')),
    currency          text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    metadata          jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(metadata) = 'object'),
    workflow_id       text NOT NULL DEFAULT '',
    run_id            text NOT NULL DEFAULT '',
    step              text NOT NULL DEFAULT '',
    reverses_id       uuid REFERENCES ledger.transactions (id),
    reversal_reason   text,
    void_reason       text,
    adjustment_source text,
    adjustment_reason text,
    approved_by       text,
    requested_by      text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    posted_at         timestamptz,
    voided_at         timestamptz,
    reversed_at       timestamptz,
    CONSTRAINT transactions_tenant_key UNIQUE (tenant_id, idempotency_key),
    CONSTRAINT transactions_tenant_id_currency_key UNIQUE (tenant_id, id, currency),
    -- a transaction is reversed at most once
    CONSTRAINT transactions_reverses_once UNIQUE (reverses_id),
    CONSTRAINT transactions_reversal_shape CHECK (
        (kind = 'REVERSAL') = (reverses_id IS NOT NULL)
        AND (kind <> 'REVERSAL' OR status = 'POSTED')),
    CONSTRAINT transactions_adjustment_shape CHECK (
        kind <> 'ADJUSTMENT' OR (
            status IN ('POSTED', 'REVERSED')
            AND coalesce(adjustment_source, '') <> '' AND coalesce(adjustment_reason, '') <> ''
            AND coalesce(approved_by, '') <> '' AND coalesce(requested_by, '') <> ''
            AND approved_by <> requested_by))
);

-- Only the status (and the time and reason that go with it) may change, and only forward.
CREATE FUNCTION ledger.transactions_guard() RETURNS trigger
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

CREATE TRIGGER transactions_guard BEFORE UPDATE OR DELETE ON ledger.transactions
    FOR EACH ROW EXECUTE FUNCTION ledger.transactions_guard();
CREATE TRIGGER transactions_no_truncate BEFORE TRUNCATE ON ledger.transactions
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_change();

-- Entries --------------------------------------------------------------------------------------

-- Drawn by the entries_sequence trigger after the account lock, never by a column default.
CREATE SEQUENCE ledger.entry_seq AS bigint;

CREATE TABLE ledger.entries (
    seq            bigint PRIMARY KEY,
    tenant_id      text NOT NULL,
    transaction_id uuid NOT NULL,
    account_id     uuid NOT NULL,
    currency       text NOT NULL,
    -- POSTED moves the posted balance; HOLD opens a pending hold (two-phase); RELEASE closes it
    -- again when the pending transaction is committed or voided. Nothing is ever updated.
    phase          text NOT NULL CHECK (phase IN ('POSTED', 'HOLD', 'RELEASE')),
    direction      text NOT NULL CHECK (direction IN ('DEBIT', 'CREDIT')),
    amount         numeric(20, 0) NOT NULL CHECK (amount > 0),
    created_at     timestamptz NOT NULL,
    CONSTRAINT entries_transaction_fkey FOREIGN KEY (tenant_id, transaction_id, currency)
        REFERENCES ledger.transactions (tenant_id, id, currency),
    CONSTRAINT entries_account_fkey FOREIGN KEY (tenant_id, account_id, currency)
        REFERENCES ledger.accounts (tenant_id, id, currency)
);

-- Balance reads: a range scan over one account's newest entries (after its latest checkpoint);
-- everything the sum needs, tenant included for the row-level security filter, is in the index,
-- so the scan can be index-only.
CREATE INDEX entries_account_seq ON ledger.entries (account_id, seq)
    INCLUDE (tenant_id, phase, direction, amount, created_at);
CREATE INDEX entries_transaction ON ledger.entries (transaction_id, seq);

CREATE FUNCTION ledger.entries_sequence() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(ledger.account_lock_key(NEW.account_id));
    NEW.seq := nextval('ledger.entry_seq');
    NEW.created_at := clock_timestamp();
    RETURN NEW;
END
$$;

CREATE TRIGGER entries_sequence BEFORE INSERT ON ledger.entries
    FOR EACH ROW EXECUTE FUNCTION ledger.entries_sequence();
CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON ledger.entries
    FOR EACH ROW EXECUTE FUNCTION ledger.refuse_change();
CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON ledger.entries
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_change();

-- A transaction is consistent when, per phase, its debits equal its credits, every release
-- cancels its hold exactly, and its entries agree with its status:
--   PENDING: holds only     VOIDED: holds, all released     POSTED/REVERSED: posted entries,
--   and any holds all released.
-- Balance is checked at the end of every statement that inserts entries, over all entries (old
-- and new) of the transactions it touched, set-based from the statement's transition table: the
-- entries of one phase of a transaction are inserted together. Status consistency is checked
-- there too, and again at commit for every inserted or updated transaction (deferred), so a
-- transaction without entries, or a status change without its entries, never commits.
-- Whether a transaction's entry counts per phase fit its status.
CREATE FUNCTION ledger.status_fits(status text, posted_n bigint, hold_n bigint, release_n bigint) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE status
        WHEN 'PENDING' THEN hold_n > 0 AND posted_n = 0 AND release_n = 0
        WHEN 'VOIDED' THEN hold_n > 0 AND posted_n = 0 AND release_n = hold_n
        ELSE posted_n > 0 AND release_n = hold_n
    END
$$;

-- The shape of one transaction: its status, and per phase the number of entries and
-- debits − credits. Read through the entries' transaction index, one transaction at a time.
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

CREATE FUNCTION ledger.entries_balanced() RETURNS trigger
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

CREATE FUNCTION ledger.transactions_consistent() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    st text;
    posted_n bigint;
    hold_n bigint;
    release_n bigint;
BEGIN
    -- Inline rather than through transaction_shape: this runs once per transaction at commit,
    -- and PL/pgSQL keeps the plan of its own queries while a SQL function is planned per call.
    SELECT t.status,
           count(e.seq) FILTER (WHERE e.phase = 'POSTED'),
           count(e.seq) FILTER (WHERE e.phase = 'HOLD'),
           count(e.seq) FILTER (WHERE e.phase = 'RELEASE')
      INTO st, posted_n, hold_n, release_n
      FROM ledger.transactions t
      LEFT JOIN ledger.entries e ON e.transaction_id = t.id
     WHERE t.id = NEW.id
     GROUP BY t.status;
    IF NOT coalesce(ledger.status_fits(st, posted_n, hold_n, release_n), false) THEN
        RAISE EXCEPTION 'ledger: entries of transaction % do not match its status %', NEW.id, st
            USING ERRCODE = '23514', CONSTRAINT = 'entries_match_status';
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER entries_balanced AFTER INSERT ON ledger.entries
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.entries_balanced();
CREATE CONSTRAINT TRIGGER transactions_consistent AFTER INSERT OR UPDATE ON ledger.transactions
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger.transactions_consistent();

-- Balance checkpoints --------------------------------------------------------------------------

-- The sums of one account's entries with seq <= seq: a cache for balance reads on accounts with
-- many entries. Immutable, and recomputable from the entries (VerifyCheckpoints does).
CREATE TABLE ledger.balance_checkpoints (
    tenant_id       text NOT NULL,
    account_id      uuid NOT NULL,
    currency        text NOT NULL,
    seq             bigint NOT NULL,
    entry_count     bigint NOT NULL CHECK (entry_count > 0),
    last_entry_at   timestamptz NOT NULL,
    posted_debits   numeric(20, 0) NOT NULL CHECK (posted_debits >= 0),
    posted_credits  numeric(20, 0) NOT NULL CHECK (posted_credits >= 0),
    pending_debits  numeric(20, 0) NOT NULL CHECK (pending_debits >= 0),
    pending_credits numeric(20, 0) NOT NULL CHECK (pending_credits >= 0),
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, seq),
    CONSTRAINT balance_checkpoints_account_fkey FOREIGN KEY (tenant_id, account_id, currency)
        REFERENCES ledger.accounts (tenant_id, id, currency)
);
CREATE INDEX balance_checkpoints_account_time ON ledger.balance_checkpoints (account_id, last_entry_at);

CREATE TRIGGER balance_checkpoints_append_only BEFORE UPDATE OR DELETE ON ledger.balance_checkpoints
    FOR EACH ROW EXECUTE FUNCTION ledger.refuse_change();
CREATE TRIGGER balance_checkpoints_no_truncate BEFORE TRUNCATE ON ledger.balance_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_change();

-- Privileges: the runtime role reads and appends; only transactions' status may be updated.
REVOKE UPDATE, DELETE, TRUNCATE ON ledger.accounts, ledger.entries, ledger.balance_checkpoints FROM wagerail_app;
REVOKE DELETE, TRUNCATE ON ledger.transactions FROM wagerail_app;

-- Row-level security: every table, forced, so the owner is filtered too.
ALTER TABLE ledger.accounts ENABLE ROW LEVEL SECURITY;
ALTER TABLE ledger.accounts FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ledger.accounts
    USING (tenant_id = ledger.current_tenant()) WITH CHECK (tenant_id = ledger.current_tenant());
ALTER TABLE ledger.transactions ENABLE ROW LEVEL SECURITY;
ALTER TABLE ledger.transactions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ledger.transactions
    USING (tenant_id = ledger.current_tenant()) WITH CHECK (tenant_id = ledger.current_tenant());
ALTER TABLE ledger.entries ENABLE ROW LEVEL SECURITY;
ALTER TABLE ledger.entries FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ledger.entries
    USING (tenant_id = ledger.current_tenant()) WITH CHECK (tenant_id = ledger.current_tenant());
ALTER TABLE ledger.balance_checkpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE ledger.balance_checkpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ledger.balance_checkpoints
    USING (tenant_id = ledger.current_tenant()) WITH CHECK (tenant_id = ledger.current_tenant());
