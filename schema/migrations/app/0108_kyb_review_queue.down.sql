DROP INDEX app.organizations_kyb_pending;
