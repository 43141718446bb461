//go:build !noembed

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
)

// The payroll part of the demo: a second admin of the business, the payroll approver, so that a
// run's four eyes can be shown (the owner calculates, the approver approves: the API refuses the
// calculator's own approval). The approver is invited through the team route like any member and
// sets a password with the set-up link the dev inbox holds, so the demo needs the dev inbox (with
// SMTP configured the link leaves the machine and this part is skipped).
const (
	demoApproverEmail = "approver@demo.wagerail.test"
	demoApproverName  = "Meron Haile"
)

// payroll brings the payroll part to its complete state (nothing when it is).
func (s *demoSeed) payroll(ctx context.Context) error {
	if s.d.PayrollComplete || s.env.DevInbox == "" {
		return nil
	}
	if s.d.ApproverEmail == "" {
		s.d.ApproverEmail, s.d.ApproverPassword = demoApproverEmail, randomToken()
		if err := s.save(); err != nil {
			return err
		}
	}
	_, err := identity.UserByEmail(ctx, s.app, s.d.ApproverEmail)
	switch {
	case err == nil:
		if _, err := signedIn(ctx, s.env.APIURL, s.d.ApproverEmail, s.d.ApproverPassword); err == nil {
			s.d.PayrollComplete = true
			return s.save()
		}
		// Invited, but the password was never set: set it from the latest link.
	case errors.Is(err, identity.ErrNotFound):
		owner, err := s.ownerClient(ctx)
		if err != nil {
			return err
		}
		if err := owner.call(ctx, http.MethodPost, "/api/business/"+s.d.BusinessID+"/team-members", map[string]any{
			"email": s.d.ApproverEmail, "name": demoApproverName, "role": "admin", "appRoles": []string{orgs.AdminRole},
			"title": "Payroll approver"}, http.StatusCreated, nil); err != nil {
			return fmt.Errorf("invite the payroll approver: %w", err)
		}
	default:
		return err
	}
	token, err := s.inboxToken(s.d.ApproverEmail, notify.AccountSetup)
	if err != nil {
		return fmt.Errorf("the approver's set-up link: %w", err)
	}
	if err := newDemoClient(s.env.APIURL).call(ctx, http.MethodPost, "/api/auth/reset-password", map[string]any{
		"token": token, "newPassword": s.d.ApproverPassword}, http.StatusOK, nil); err != nil {
		return fmt.Errorf("set the approver's password: %w", err)
	}
	s.d.PayrollComplete = true
	return s.save()
}

// inboxToken is the token of the latest link of purpose the dev inbox holds for to.
func (s *demoSeed) inboxToken(to string, purpose notify.Purpose) (string, error) {
	m, err := notify.Latest(s.env.DevInbox, to, purpose)
	if err != nil {
		return "", err
	}
	link, err := url.Parse(m.Secret)
	if err != nil {
		return "", err
	}
	return link.Query().Get("token"), nil
}
