-- Organization invitations (issue 12): at most one PENDING invitation per organization and
-- e-mail, so a new invitation replaces the previous one rather than leaving two live links; and
-- who accepted it and when it stopped being pending, for the member's history.
CREATE UNIQUE INDEX invitations_pending_email ON app.invitations (tenant_id, email) WHERE status = 'PENDING';

ALTER TABLE app.invitations
    ADD COLUMN accepted_by text REFERENCES app.users (id),
    ADD COLUMN closed_at   timestamptz,
    ADD CONSTRAINT invitations_closed CHECK ((status = 'PENDING') = (closed_at IS NULL)),
    ADD CONSTRAINT invitations_accepted_by CHECK ((status = 'ACCEPTED') = (accepted_by IS NOT NULL));
