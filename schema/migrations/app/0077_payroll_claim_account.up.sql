-- The run's disbursement sends a fixed list: the entries its claim sent (claim_account, the
-- account the claim sent each one's first attempt to; NULL for an entry the claim did not send:
-- net 0, or its account at another partner). A saga that resumes the run's disbursement (after
-- its predecessor failed or was terminated) sends that same list again under the same batch and
-- item references, so the bank answers each item with its first outcome. Before this the list
-- was rebuilt from the entries as they are now: an operator's retry of an entry the claim had
-- not sent put it into the list (paid twice), and a shifted list matched the bank's outcomes to
-- the wrong entries. Entries claimed before this migration: the sent ones whose first attempt
-- was the claim's (a retry of an unsent entry has its first attempt under a retry workflow).
ALTER TABLE app.payroll_entries ADD COLUMN claim_account text CHECK (length(claim_account) BETWEEN 1 AND 64);

UPDATE app.payroll_entries SET claim_account = payout_account
    WHERE net_santim > 0 AND payout_account IS NOT NULL AND attempts >= 1 AND NOT (attempts = 1 AND retry_workflow_id IS NOT NULL);
