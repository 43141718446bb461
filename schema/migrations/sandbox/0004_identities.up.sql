-- The simulated national ID registry (sandbox/identity.go): who a national id belongs to, born
-- when, and whether the id still stands. Kept with the bank's books so every sandbox process reads
-- one register and an operator's identities outlive a restart. Not tenant data: no row-level
-- security (as 0002); the runtime role gets DML through the schema's default privileges (0001).
CREATE TABLE sandbox.identities (
    national_id   text PRIMARY KEY CHECK (national_id ~ '^[A-Z0-9]{6,32}$'),
    full_name     text NOT NULL CHECK (octet_length(full_name) BETWEEN 1 AND 256),
    date_of_birth date NOT NULL CHECK (date_of_birth >= DATE '1900-01-01'),
    status        text NOT NULL CHECK (status IN ('ACTIVE', 'REVOKED', 'DECEASED')),
    created_at    timestamptz NOT NULL DEFAULT now()
);
