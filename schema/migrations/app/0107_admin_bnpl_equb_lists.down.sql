DROP INDEX app.equb_groups_admin_status;
DROP INDEX app.equb_groups_admin_tenant;
DROP INDEX app.equb_groups_admin;
DROP INDEX app.bnpl_agreements_admin_status;
DROP INDEX app.bnpl_agreements_admin_merchant;
DROP INDEX app.bnpl_agreements_admin;
