DROP TABLE app.payroll_overtime_entries;
DROP TABLE app.payroll_overtime_policies;
DROP TABLE app.payroll_one_time_earnings;
DROP DOMAIN app.pay_period;
