-- Sanctions screening (issue 13): the published lists, and the checks run against them.
--
-- Trigram matching for candidate retrieval. pg_trgm is a trusted extension, so the database owner
-- (this migration's role) may create it; it lives in public, which every role's search_path names.
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

-- The lists are GLOBAL, not tenant rows: a sanctions list is the same public government data for
-- every organization, so there is no tenant_id and no row-level security. The runtime role only
-- reads them (screening); it must never write them, or a compromised request could delete a
-- designation and let money reach a listed person. Ingestion (`wagerail sanctions ingest`) writes
-- them as wagerail_platform through the audited cross-tenant path (internal/crosstenant).
--
-- A version is one ingested publication of one source, named by the SHA-256 of its files: the
-- same content twice is the same version (ingest says "unchanged"). It is loaded inactive and made
-- active in the transaction that loaded it, so screening sees either the previous version or the
-- complete new one, and a failed load leaves the previous one active.
CREATE TABLE app.sanctions_list_versions (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source          text NOT NULL CHECK (source IN ('OFAC', 'UN', 'NATIONAL')),
    content_hash    text NOT NULL CHECK (content_hash ~ '^[0-9a-f]{64}$'),
    entry_count     integer NOT NULL CHECK (entry_count >= 0),
    name_count      integer NOT NULL CHECK (name_count >= entry_count),
    ingested_at     timestamptz NOT NULL DEFAULT now(),
    ingested_by     text NOT NULL,
    active          boolean NOT NULL DEFAULT false,
    UNIQUE (source, content_hash)
);
-- At most one active version per source (ingest swaps them in one transaction, so after the
-- first ingest of a source there is always exactly one).
CREATE UNIQUE INDEX sanctions_list_versions_one_active ON app.sanctions_list_versions (source) WHERE active;

CREATE SEQUENCE app.sanctions_entry_ids;

-- One listed person, organization, vessel or aircraft. dobs are the list's dates of birth as
-- YYYY, YYYY-MM, YYYY-MM-DD or a year range YYYY..YYYY (approximate dates are widened to ranges).
-- Entries of versions that are no longer active are deleted when a new version activates; a
-- check's evidence is self-contained JSON, so nothing refers to them.
CREATE TABLE app.sanctions_entries (
    id              bigint PRIMARY KEY DEFAULT nextval('app.sanctions_entry_ids'),
    version_id      bigint NOT NULL REFERENCES app.sanctions_list_versions (id),
    source_ref      text NOT NULL,
    entry_type      text NOT NULL CHECK (entry_type IN ('INDIVIDUAL', 'ENTITY', 'VESSEL', 'AIRCRAFT')),
    primary_name    text NOT NULL,
    normalized_name text NOT NULL,
    dobs            text[] NOT NULL DEFAULT '{}',
    programs        text[] NOT NULL DEFAULT '{}',
    UNIQUE (version_id, source_ref)
);
ALTER SEQUENCE app.sanctions_entry_ids OWNED BY app.sanctions_entries.id;

-- Every name an entry is known by, normalised (internal/sanctions.Normalize), with the trigram
-- index screening retrieves candidates through. The primary name is a row here too. WEAK aliases
-- (OFAC's "a.k.a." in remarks, UN aliases of quality Low) can raise a REVIEW, never a BLOCK.
CREATE TABLE app.sanctions_names (
    entry_id        bigint NOT NULL REFERENCES app.sanctions_entries (id) ON DELETE CASCADE,
    version_id      bigint NOT NULL REFERENCES app.sanctions_list_versions (id),
    kind            text NOT NULL CHECK (kind IN ('PRIMARY', 'ALIAS', 'WEAK_ALIAS')),
    name            text NOT NULL,
    normalized      text NOT NULL CHECK (normalized <> '')
);
CREATE INDEX sanctions_names_trgm ON app.sanctions_names USING gin (normalized gin_trgm_ops);
CREATE INDEX sanctions_names_entry ON app.sanctions_names (entry_id);

-- Read-only for the runtime role (the schema's default privileges gave it more).
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON app.sanctions_list_versions, app.sanctions_entries, app.sanctions_names FROM wagerail_app;
REVOKE USAGE, UPDATE ON SEQUENCE app.sanctions_entry_ids FROM wagerail_app;
GRANT SELECT, INSERT, UPDATE ON app.sanctions_list_versions TO wagerail_platform;
GRANT SELECT, INSERT, DELETE ON app.sanctions_entries, app.sanctions_names TO wagerail_platform;
GRANT USAGE, SELECT ON SEQUENCE app.sanctions_entry_ids TO wagerail_platform;

-- A screening check of one subject (a user or an employee) of one organization: tenant data, RLS
-- forced. outcome is the screening's verdict; a REVIEW or BLOCK needs a person to look
-- (needs_review) until a platform admin records a decision: CLEARED (a REVIEW that is a false
-- positive) or CONFIRMED. The money sagas' gate reads the subject's latest check (by seq).
-- list_versions are the active list versions the check ran against (sorted ids): when they are no
-- longer the active ones, the check is stale and the gate refuses until a re-screening.
CREATE TABLE app.sanctions_checks (
    id              text PRIMARY KEY,
    seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    tenant_id       text NOT NULL REFERENCES app.organizations (id),
    subject_type    text NOT NULL CHECK (subject_type IN ('USER', 'EMPLOYEE')),
    subject_id      text NOT NULL,
    -- The login user the subject is (the user itself, or an employee's linked user) when known:
    -- that user reads their own checks (GET /api/me/sanctions).
    user_id         text REFERENCES app.users (id),
    name_screened   text NOT NULL,
    dob             date,
    outcome         text NOT NULL CHECK (outcome IN ('CLEAR', 'REVIEW', 'BLOCK')),
    score           double precision NOT NULL CHECK (score >= 0 AND score <= 1),
    evidence        jsonb NOT NULL CHECK (jsonb_typeof(evidence) = 'array'),
    list_versions   bigint[] NOT NULL,
    trigger         text NOT NULL CHECK (trigger IN ('SCREEN', 'RESCREEN')),
    needs_review    boolean NOT NULL,
    review_decision text CHECK (review_decision IN ('CLEARED', 'CONFIRMED')),
    reviewed_by     text,
    reviewed_at     timestamptz,
    review_note     text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (outcome <> 'CLEAR' OR (NOT needs_review AND review_decision IS NULL)),
    CHECK (NOT (needs_review AND review_decision IS NOT NULL)),
    CHECK ((review_decision IS NULL) = (reviewed_at IS NULL) AND (reviewed_at IS NULL) = (reviewed_by IS NULL)),
    CHECK (review_decision IS DISTINCT FROM 'CLEARED' OR outcome = 'REVIEW')
);
CREATE INDEX sanctions_checks_subject ON app.sanctions_checks (tenant_id, subject_type, subject_id, seq DESC);
CREATE INDEX sanctions_checks_user ON app.sanctions_checks (user_id, seq DESC) WHERE user_id IS NOT NULL;
CREATE INDEX sanctions_checks_review ON app.sanctions_checks (seq) WHERE needs_review;

ALTER TABLE app.sanctions_checks ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.sanctions_checks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.sanctions_checks
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
-- A user reads the checks about themselves in every organization (read only: SELECT policy).
CREATE POLICY own_checks ON app.sanctions_checks FOR SELECT
    USING (user_id = app.current_user_id());

-- Checks are a record: the runtime role writes new ones (screening at KYC approval) and never
-- changes or deletes one. Review decisions are a platform admin's, through the cross-tenant path;
-- re-screening after an ingest reads and writes every tenant's checks there too.
REVOKE UPDATE, DELETE, TRUNCATE ON app.sanctions_checks FROM wagerail_app;
GRANT SELECT, INSERT ON app.sanctions_checks TO wagerail_platform;
GRANT UPDATE (needs_review, review_decision, reviewed_by, reviewed_at, review_note) ON app.sanctions_checks TO wagerail_platform;
CREATE POLICY platform_access ON app.sanctions_checks TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
