ALTER TABLE app.invitations
    DROP CONSTRAINT invitations_accepted_by,
    DROP CONSTRAINT invitations_closed,
    DROP COLUMN closed_at,
    DROP COLUMN accepted_by;
DROP INDEX app.invitations_pending_email;
