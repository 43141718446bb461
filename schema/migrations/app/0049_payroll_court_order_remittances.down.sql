DROP TABLE app.payroll_court_order_remittances;
