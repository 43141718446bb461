DROP INDEX app.audit_log_tenant_actor;
DROP INDEX app.audit_log_tenant_id;
CREATE INDEX audit_log_tenant_time ON app.audit_log (tenant_id, occurred_at DESC);
