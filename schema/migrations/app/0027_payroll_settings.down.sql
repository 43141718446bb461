DROP TABLE app.payroll_auto_lock_policy_overrides, app.payroll_auto_lock_policies,
    app.payroll_settings_overrides, app.payroll_settings;
