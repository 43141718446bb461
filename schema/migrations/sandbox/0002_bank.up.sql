-- The simulated partner bank. These tables are the bank's own books, not Wagerail data: they are
-- not tenant-scoped (tenant_id on a transfer is only echoed back in callbacks), so they carry no
-- row-level security. The runtime role wagerail_app gets DML through the schema's default
-- privileges (0001).

-- Accounts keep their balance as a column: it is the bank's booked balance, changed only in the
-- same transaction that writes the statement line recording the change (balance_after_santim of
-- an account's newest line always equals balance_santim). A hold is booked as an immediate debit,
-- so balance_santim is also the available balance and the CHECK below forbids overdraft.
CREATE TABLE sandbox.accounts (
    account_number text PRIMARY KEY CHECK (account_number ~ '^[A-Za-z0-9_-]{1,64}$'),
    holder_name    text NOT NULL CHECK (length(holder_name) BETWEEN 1 AND 140),
    currency       text NOT NULL DEFAULT 'ETB' CHECK (currency ~ '^[A-Z]{3}$'),
    status         text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'CLOSED')),
    balance_santim numeric(20,0) NOT NULL DEFAULT 0 CHECK (balance_santim >= 0),
    created_at     timestamptz NOT NULL DEFAULT now(),
    closed_at      timestamptz
);

-- Bulk credit transfers (pain.001 in spirit). request_hash is the SHA-256 of the canonical request
-- so a replay with the same batch reference but a different body is told apart (409).
CREATE TABLE sandbox.batches (
    id              uuid PRIMARY KEY,
    batch_reference text NOT NULL,
    request_hash    bytea NOT NULL,
    from_account    text NOT NULL REFERENCES sandbox.accounts (account_number),
    currency        text NOT NULL,
    tenant_id       text NOT NULL,
    domain          text NOT NULL,
    item_count      integer NOT NULL CHECK (item_count > 0),
    total_santim    numeric(20,0) NOT NULL CHECK (total_santim > 0),
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX batches_reference_key ON sandbox.batches (batch_reference);

-- to_account has no foreign key: a batch item to an unknown account is recorded as a FAILED
-- transfer (ACCOUNT_NOT_FOUND) so the caller can look it up by reference like any other.
CREATE TABLE sandbox.transfers (
    id                  uuid PRIMARY KEY,
    reference           text NOT NULL CHECK (length(reference) BETWEEN 1 AND 140),
    from_account        text NOT NULL REFERENCES sandbox.accounts (account_number),
    to_account          text NOT NULL,
    amount_santim       numeric(20,0) NOT NULL CHECK (amount_santim > 0),
    currency            text NOT NULL,
    tenant_id           text NOT NULL,
    domain              text NOT NULL,
    callback_url        text,
    status              text NOT NULL CHECK (status IN ('PENDING', 'SETTLED', 'FAILED')),
    failure_code        text,
    -- set by fault injection at creation: the transfer fails with this code when it settles
    forced_failure_code text,
    batch_id            uuid REFERENCES sandbox.batches (id),
    batch_seq           integer,
    created_at          timestamptz NOT NULL,
    settle_after        timestamptz NOT NULL,
    settled_at          timestamptz,
    failed_at           timestamptz,
    CHECK ((status = 'FAILED') = (failure_code IS NOT NULL)),
    CHECK ((status = 'SETTLED') = (settled_at IS NOT NULL)),
    CHECK ((status = 'FAILED') = (failed_at IS NOT NULL)),
    CHECK ((batch_id IS NULL) = (batch_seq IS NULL))
);
-- Idempotency lives here: one transfer per reference, whatever the number of concurrent callers.
CREATE UNIQUE INDEX transfers_reference_key ON sandbox.transfers (reference);
CREATE INDEX transfers_due ON sandbox.transfers (settle_after, id) WHERE status = 'PENDING';
CREATE UNIQUE INDEX transfers_batch_seq ON sandbox.transfers (batch_id, batch_seq) WHERE batch_id IS NOT NULL;
CREATE INDEX transfers_created ON sandbox.transfers (created_at DESC, id);

-- One line per booking (opening/funding credit, hold debit, settlement credit, refund credit).
-- balance_after_santim is the account's balance right after this line, so a statement is
-- self-checking: each line's balance is the previous one's plus or minus its amount.
CREATE TABLE sandbox.statement_lines (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_number       text NOT NULL REFERENCES sandbox.accounts (account_number),
    transfer_id          uuid REFERENCES sandbox.transfers (id),
    kind                 text NOT NULL CHECK (kind IN ('OPENING', 'FUNDING', 'HOLD', 'CREDIT', 'REFUND')),
    reference            text NOT NULL,
    direction            text NOT NULL CHECK (direction IN ('CRDT', 'DBIT')),
    amount_santim        numeric(20,0) NOT NULL CHECK (amount_santim > 0),
    currency             text NOT NULL,
    counterparty         text NOT NULL DEFAULT '',
    balance_after_santim numeric(20,0) NOT NULL CHECK (balance_after_santim >= 0),
    booked_at            timestamptz NOT NULL,
    booking_date         date NOT NULL,
    value_date           date NOT NULL,
    CHECK ((kind IN ('OPENING', 'FUNDING')) = (transfer_id IS NULL)),
    CHECK ((kind = 'HOLD') = (direction = 'DBIT'))
);
CREATE INDEX statement_lines_account_date ON sandbox.statement_lines (account_number, booking_date, id);
-- A transfer is held, credited or refunded at most once.
CREATE UNIQUE INDEX statement_lines_transfer_kind ON sandbox.statement_lines (transfer_id, kind) WHERE transfer_id IS NOT NULL;

-- Injected faults: scope '*' is global, any other scope is an account number. Shared through the
-- database so every sandbox process behaves the same.
CREATE TABLE sandbox.faults (
    scope      text PRIMARY KEY,
    config     jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Callback outbox: written in the settlement transaction, delivered by the deliverer with retries.
-- copy 2 is an injected duplicate of the same event. url NULL means the process default at
-- delivery time. lease_until lets several sandbox processes deliver without sending a row twice.
CREATE TABLE sandbox.callbacks (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id        uuid NOT NULL,
    copy            smallint NOT NULL DEFAULT 1 CHECK (copy IN (1, 2)),
    transfer_id     uuid NOT NULL REFERENCES sandbox.transfers (id),
    url             text,
    body            bytea NOT NULL,
    out_of_order    boolean NOT NULL DEFAULT false,
    dropped         boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    lease_until     timestamptz,
    attempts        integer NOT NULL DEFAULT 0,
    last_status     integer,
    last_error      text,
    delivered_at    timestamptz,
    gave_up_at      timestamptz,
    UNIQUE (event_id, copy),
    UNIQUE (transfer_id, copy)
);
CREATE INDEX callbacks_due ON sandbox.callbacks (next_attempt_at, id)
    WHERE delivered_at IS NULL AND gave_up_at IS NULL AND NOT dropped;
