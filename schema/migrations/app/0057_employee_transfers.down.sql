DROP TABLE app.employee_transfers;
