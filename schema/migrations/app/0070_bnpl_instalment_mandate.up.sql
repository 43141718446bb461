-- Which payroll deduction mandate collects (or collected) a BNPL instalment (issue 29): set with
-- collect_source PAYROLL when payroll completion holds the instalment, cleared with it on release.
ALTER TABLE app.bnpl_instalments ADD COLUMN collect_mandate_id text CHECK (collect_mandate_id LIKE 'mdt\_%' AND length(collect_mandate_id) <= 128);
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_collect_mandate
    CHECK (collect_mandate_id IS NULL OR collect_source = 'PAYROLL');
