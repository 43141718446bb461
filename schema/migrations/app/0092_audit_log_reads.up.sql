-- Reading the whole trail (GET /api/audit-logs, GET /api/admin/audit-logs; audit.Find): newest
-- first by id, per tenant, optionally one actor's. (tenant_id, id) replaces (tenant_id,
-- occurred_at), which no query ordered by; (tenant_id, actor, id) answers "what did this person do".
DROP INDEX app.audit_log_tenant_time;
CREATE INDEX audit_log_tenant_id ON app.audit_log (tenant_id, id);
CREATE INDEX audit_log_tenant_actor ON app.audit_log (tenant_id, actor, id);
