DROP INDEX app.loans_fi_requests;
DROP TRIGGER loans_request_affordability_fixed ON app.loans;
DROP FUNCTION app.loans_request_affordability_fixed();
ALTER TABLE app.loans DROP CONSTRAINT loans_request_affordability,
    DROP COLUMN afford_max_amount_santim, DROP COLUMN afford_binding, DROP COLUMN afford_limit_santim,
    DROP COLUMN afford_debt_service_limit_santim, DROP COLUMN afford_max_debt_service_basis_points,
    DROP COLUMN afford_recoverable_santim, DROP COLUMN afford_existing_instalments_santim,
    DROP COLUMN afford_projected_net_santim;
