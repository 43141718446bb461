-- Disputes (issue 27, part 1; the spec's "Dispute (Proposed)"): a customer-attributable ledger
-- transaction contested by an employee, a partner bank or our own staff, worked by one workflow per
-- dispute (workflows/dispute.go) under an SLA deadline. The store and its rules are
-- internal/disputes. Tenant data: RLS enabled and FORCED; the platform role reads and acts through
-- platform_access (operators decide and platform admins reopen across tenants).
--
-- States (disputes.Machine): OPENED → UNDER_INVESTIGATION → CLOSED_NO_ACTION | RESOLVED_ADJUSTMENT
-- | RESOLVED_REVERSAL | ESCALATED_TO_PARTNER; a CLOSED_NO_ACTION dispute is REOPENED, which
-- creates a new dispute (reopens_dispute_id). Forward-only: the store refuses every other move.
CREATE TABLE app.disputes (
    id                        text PRIMARY KEY CHECK (id LIKE 'dsp\_%' AND length(id) <= 128),
    tenant_id                 text NOT NULL REFERENCES app.organizations (id),
    -- The disputed ledger transaction, by id: the ledger is another service, so no foreign key.
    ledger_transaction_id     text NOT NULL CHECK (length(ledger_transaction_id) BETWEEN 1 AND 128),
    -- The customer-attributable account the transaction touched (receivable-from-employee:<id>).
    ledger_account_id         text NOT NULL CHECK (length(ledger_account_id) BETWEEN 1 AND 128),
    ledger_account_name       text NOT NULL CHECK (length(ledger_account_name) BETWEEN 1 AND 256),
    amount_santim             numeric(20, 0) NOT NULL CHECK (amount_santim > 0 AND amount_santim <= 1000000000000),
    currency                  text NOT NULL DEFAULT 'ETB' CHECK (currency ~ '^[A-Z]{3}$'),
    raised_by_type            text NOT NULL CHECK (raised_by_type IN ('EMPLOYEE', 'PARTNER_BANK', 'INTERNAL')),
    raised_by_subject_id      text NOT NULL CHECK (length(raised_by_subject_id) BETWEEN 1 AND 128),
    reason                    text NOT NULL CHECK (length(reason) BETWEEN 1 AND 1024),
    status                    text NOT NULL DEFAULT 'OPENED' CHECK (status IN ('OPENED', 'UNDER_INVESTIGATION',
                                  'CLOSED_NO_ACTION', 'RESOLVED_ADJUSTMENT', 'RESOLVED_REVERSAL', 'ESCALATED_TO_PARTNER', 'REOPENED')),
    decision                  text CHECK (decision IN ('NO_ACTION', 'ADJUSTMENT', 'REVERSAL', 'CHARGEBACK')),
    decision_reason           text CHECK (length(decision_reason) BETWEEN 1 AND 1024),
    decision_by               text CHECK (length(decision_by) BETWEEN 1 AND 128),
    -- The platform admin who approved an adjustment (never the operator who decided it).
    approved_by               text CHECK (length(approved_by) BETWEEN 1 AND 128),
    reversal_transaction_id   text CHECK (length(reversal_transaction_id) BETWEEN 1 AND 128),
    adjustment_transaction_id text CHECK (length(adjustment_transaction_id) BETWEEN 1 AND 128),
    partner_chargeback_ref    text CHECK (length(partner_chargeback_ref) BETWEEN 1 AND 128),
    reopens_dispute_id        text REFERENCES app.disputes (id),
    -- The workflow that works the dispute (workflows.DisputeWorkflowID).
    workflow_id               text NOT NULL CHECK (length(workflow_id) BETWEEN 1 AND 255),
    customer_notified_at      timestamptz,
    partner_notified_at       timestamptz,
    sla_deadline              timestamptz NOT NULL,
    sla_breach_warned_at      timestamptz,
    opened_at                 timestamptz NOT NULL DEFAULT now(),
    closed_at                 timestamptz,
    updated_at                timestamptz NOT NULL DEFAULT now(),
    CHECK (sla_deadline > opened_at),
    -- A decision is whole: what was decided, why, by whom and when, on a terminal state only.
    CHECK ((decision IS NULL) = (decision_by IS NULL) AND (decision IS NULL) = (decision_reason IS NULL)),
    CHECK ((decision IS NULL) = (status IN ('OPENED', 'UNDER_INVESTIGATION', 'REOPENED'))
           OR (status = 'REOPENED' AND decision = 'NO_ACTION')),
    CHECK ((closed_at IS NULL) = (status IN ('OPENED', 'UNDER_INVESTIGATION'))),
    CHECK ((status = 'RESOLVED_ADJUSTMENT') = (adjustment_transaction_id IS NOT NULL)),
    CHECK ((status = 'RESOLVED_REVERSAL') = (reversal_transaction_id IS NOT NULL)),
    CHECK ((status = 'ESCALATED_TO_PARTNER') = (partner_chargeback_ref IS NOT NULL)),
    CHECK ((status = 'RESOLVED_ADJUSTMENT') = (approved_by IS NOT NULL)),
    -- Two people approve every adjustment.
    CHECK (approved_by IS NULL OR approved_by IS DISTINCT FROM decision_by)
);
CREATE INDEX disputes_sla ON app.disputes (tenant_id, status, sla_deadline);
CREATE INDEX disputes_ledger_transaction ON app.disputes (ledger_transaction_id);
CREATE INDEX disputes_page ON app.disputes (tenant_id, id DESC);
-- One live dispute per transaction (a reopen closes its predecessor as REOPENED first).
CREATE UNIQUE INDEX disputes_one_open ON app.disputes (tenant_id, ledger_transaction_id)
    WHERE status IN ('OPENED', 'UNDER_INVESTIGATION');
-- A closed dispute is reopened at most once.
CREATE UNIQUE INDEX disputes_reopened_once ON app.disputes (reopens_dispute_id) WHERE reopens_dispute_id IS NOT NULL;

-- The dispute's history: one row per thing that happened, never changed. status is the dispute's
-- state after the event, so the latest event is the effective state (the store writes both in one
-- transaction and tests read one back against the other).
CREATE TABLE app.dispute_events (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id     text NOT NULL REFERENCES app.organizations (id),
    dispute_id    text NOT NULL REFERENCES app.disputes (id),
    event_type    text NOT NULL CHECK (event_type IN ('OPENED', 'EVIDENCE_ATTACHED', 'INVESTIGATION_STARTED', 'DECIDED',
                      'NOTIFIED', 'SLA_BREACH_IMMINENT', 'SLA_BREACHED', 'REOPENED')),
    status        text NOT NULL CHECK (status IN ('OPENED', 'UNDER_INVESTIGATION', 'CLOSED_NO_ACTION', 'RESOLVED_ADJUSTMENT',
                      'RESOLVED_REVERSAL', 'ESCALATED_TO_PARTNER', 'REOPENED')),
    payload       jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(payload) = 'object' AND pg_column_size(payload) <= 16384),
    actor_user_id text CHECK (length(actor_user_id) BETWEEN 1 AND 128),
    occurred_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dispute_events_dispute ON app.dispute_events (dispute_id, occurred_at);

-- Append-only for every role, the owner included (as app.audit_log): history is never rewritten.
CREATE FUNCTION app.dispute_events_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'app.dispute_events is append-only' USING ERRCODE = 'insufficient_privilege'; END $$;
CREATE TRIGGER dispute_events_append_only BEFORE UPDATE OR DELETE ON app.dispute_events
    FOR EACH ROW EXECUTE FUNCTION app.dispute_events_append_only();
CREATE TRIGGER dispute_events_no_truncate BEFORE TRUNCATE ON app.dispute_events
    FOR EACH STATEMENT EXECUTE FUNCTION app.dispute_events_append_only();

-- A tenant's SLA override per raiser: days counted as calendar or business days (the Ethiopian
-- business-day calendar of internal/disputes). A missing row is the spec's default.
CREATE TABLE app.dispute_sla_policies (
    tenant_id      text NOT NULL REFERENCES app.organizations (id),
    raised_by_type text NOT NULL CHECK (raised_by_type IN ('EMPLOYEE', 'PARTNER_BANK', 'INTERNAL')),
    day_kind       text NOT NULL CHECK (day_kind IN ('CALENDAR', 'BUSINESS')),
    days           integer NOT NULL CHECK (days BETWEEN 1 AND 90),
    updated_by     text NOT NULL CHECK (length(updated_by) BETWEEN 1 AND 128),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, raised_by_type)
);

ALTER TABLE app.disputes ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.disputes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.disputes
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.dispute_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.dispute_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.dispute_events
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.dispute_sla_policies ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.dispute_sla_policies FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.dispute_sla_policies
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

REVOKE DELETE, TRUNCATE ON app.disputes FROM wagerail_app;
REVOKE UPDATE, DELETE, TRUNCATE ON app.dispute_events FROM wagerail_app;
REVOKE TRUNCATE ON app.dispute_sla_policies FROM wagerail_app;

GRANT SELECT, INSERT, UPDATE ON app.disputes TO wagerail_platform;
GRANT SELECT, INSERT ON app.dispute_events TO wagerail_platform;
GRANT SELECT, INSERT, UPDATE, DELETE ON app.dispute_sla_policies TO wagerail_platform;
CREATE POLICY platform_access ON app.disputes TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.dispute_events TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.dispute_sla_policies TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
