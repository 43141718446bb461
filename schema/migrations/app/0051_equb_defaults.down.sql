DROP TABLE app.equb_defaults;
ALTER TABLE app.equb_payouts DROP CONSTRAINT equb_payouts_tenant_id_key;
ALTER TABLE app.equb_cycles DROP COLUMN due_at;
ALTER TABLE app.equb_groups DROP COLUMN contribution_due_hours, DROP COLUMN default_rule;
