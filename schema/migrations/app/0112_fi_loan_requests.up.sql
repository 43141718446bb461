-- The FI's decision queue (GET /api/fi/loan-requests; internal/lending/loan_requests.go): the loans
-- waiting for the FI's decision (REQUESTED), oldest request first, across the businesses that opted
-- in to its products.
--
-- The affordability origination judged a loan on (lending.QuoteLoan's: the product's debt-service
-- share and what the payroll can still recover, against the projection of the borrower's next run)
-- was kept only in the business's audit row and outbox event, which the FI cannot read; and the FI
-- cannot project the borrower's pay itself (the payroll rows are the business's). So origination
-- now keeps it on the loan, all the figures or none: a loan requested before this migration has
-- none, and none is made up for it (the pay it was judged on has moved since). They are the
-- request's, set once: nobody changes them afterwards (the trigger), the FI least of all.
ALTER TABLE app.loans
    -- What the projection said (the net may be below zero: it is after every deduction).
    ADD COLUMN afford_projected_net_santim          numeric(20, 0),
    ADD COLUMN afford_existing_instalments_santim   numeric(20, 0),
    ADD COLUMN afford_recoverable_santim            numeric(20, 0) CHECK (afford_recoverable_santim >= 0),
    ADD COLUMN afford_max_debt_service_basis_points integer CHECK (afford_max_debt_service_basis_points BETWEEN 1 AND 10000),
    ADD COLUMN afford_debt_service_limit_santim     numeric(20, 0) CHECK (afford_debt_service_limit_santim >= 0),
    ADD COLUMN afford_limit_santim                  numeric(20, 0) CHECK (afford_limit_santim >= 0),
    ADD COLUMN afford_binding                       text CHECK (afford_binding IN ('DEBT_SERVICE_SHARE', 'PAYROLL_RECOVERABLE')),
    ADD COLUMN afford_max_amount_santim             numeric(20, 0) CHECK (afford_max_amount_santim BETWEEN 0 AND 1000000000000),
    ADD CONSTRAINT loans_request_affordability CHECK (
        (afford_limit_santim IS NULL) = (afford_projected_net_santim IS NULL)
        AND (afford_limit_santim IS NULL) = (afford_existing_instalments_santim IS NULL)
        AND (afford_limit_santim IS NULL) = (afford_recoverable_santim IS NULL)
        AND (afford_limit_santim IS NULL) = (afford_max_debt_service_basis_points IS NULL)
        AND (afford_limit_santim IS NULL) = (afford_debt_service_limit_santim IS NULL)
        AND (afford_limit_santim IS NULL) = (afford_binding IS NULL)
        AND (afford_limit_santim IS NULL) = (afford_max_amount_santim IS NULL)
        AND afford_limit_santim = least(afford_debt_service_limit_santim, afford_recoverable_santim));

CREATE FUNCTION app.loans_request_affordability_fixed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF ROW(NEW.afford_projected_net_santim, NEW.afford_existing_instalments_santim, NEW.afford_recoverable_santim,
            NEW.afford_max_debt_service_basis_points, NEW.afford_debt_service_limit_santim, NEW.afford_limit_santim,
            NEW.afford_binding, NEW.afford_max_amount_santim)
        IS DISTINCT FROM ROW(OLD.afford_projected_net_santim, OLD.afford_existing_instalments_santim, OLD.afford_recoverable_santim,
            OLD.afford_max_debt_service_basis_points, OLD.afford_debt_service_limit_santim, OLD.afford_limit_santim,
            OLD.afford_binding, OLD.afford_max_amount_santim) THEN
        RAISE EXCEPTION 'a loan''s request affordability is set once, when it is requested' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER loans_request_affordability_fixed BEFORE UPDATE ON app.loans
    FOR EACH ROW EXECUTE FUNCTION app.loans_request_affordability_fixed();

-- The queue's walk: an FI's REQUESTED loans in the order of their request (requested_at, then id:
-- the cursor's place). A loan leaves the partial index when it is decided, so the walk reads only
-- what waits, however many loans the FI has decided. Its totals (count, requested amount, the
-- oldest request) read the same rows.
CREATE INDEX loans_fi_requests ON app.loans (fi_id, requested_at, id) WHERE status = 'REQUESTED';
