ALTER TABLE app.equb_groups DROP CONSTRAINT equb_groups_check;
ALTER TABLE app.equb_groups ADD CONSTRAINT equb_groups_check CHECK (status = 'FORMING' OR cycles_total >= 2) NOT VALID;
ALTER TABLE app.equb_memberships DROP COLUMN first_cycle;
