DROP TABLE app.employee_deductions, app.employee_allowances, app.deductions, app.allowances,
    app.payment_frequencies, app.employment_types, app.positions, app.departments;
