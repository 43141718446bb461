ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_collect_mandate;
ALTER TABLE app.bnpl_instalments DROP COLUMN collect_mandate_id;
