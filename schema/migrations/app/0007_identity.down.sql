DROP TABLE app.invitations, app.member_roles, app.roles, app.members, app.businesses, app.organizations,
    app.admin_profiles, app.backup_codes, app.verifications, app.sessions, app.users;
DROP FUNCTION app.current_user_id();
