DROP INDEX IF EXISTS app.bnpl_instalments_repaid;
