-- Where a loan is paid: the borrower's payout account when the loan was requested, kept on the
-- loan, shown to the financial institution that approves it, and the only account the
-- disbursement pays. Before this the disbursement read the employee's account when it ran, so
-- the business could repoint an approved loan to any account (the holder-name rule compared the
-- bank's name with the name the same business typed). An account changed since the request is
-- refused at disbursement (LOAN_PAYOUT_ACCOUNT_CHANGED: cancel, request again, the FI approves
-- again). Loans not paid out yet take the account their borrower has now; NULL on loans paid out
-- before this migration.
ALTER TABLE app.loans
    ADD COLUMN payout_partner        text CHECK (payout_partner <> ''),
    ADD COLUMN payout_account_number text CHECK (length(payout_account_number) BETWEEN 1 AND 64),
    ADD COLUMN payout_holder_name    text CHECK (payout_holder_name <> ''),
    ADD CONSTRAINT loans_payout CHECK ((payout_partner IS NULL) = (payout_account_number IS NULL)
        AND (payout_partner IS NULL) = (payout_holder_name IS NULL));

UPDATE app.loans l SET payout_partner = e.payout_partner, payout_account_number = e.payout_account_number,
        payout_holder_name = e.payout_holder_name
    FROM app.employees e
    WHERE l.status IN ('REQUESTED', 'APPROVED', 'DISBURSING') AND e.tenant_id = l.tenant_id AND e.id = l.borrower_id;
