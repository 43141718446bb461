DROP INDEX IF EXISTS app.bnpl_agreements_merchant;
