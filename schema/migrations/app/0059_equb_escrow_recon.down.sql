DROP TABLE app.equb_escrow_recon_partners;
DROP TABLE app.equb_escrow_recon_runs;
DROP TABLE app.equb_escrow_recons;
