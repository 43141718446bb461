DROP TABLE app.equb_payouts;
DROP TABLE app.equb_contributions;
DROP TABLE app.equb_escrow_bindings;
DROP TABLE app.equb_cycles;
DROP TABLE app.equb_memberships;
DROP TABLE app.equb_groups;
