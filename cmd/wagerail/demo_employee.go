//go:build !noembed

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
)

// The employee part of the demo: Almaz Tesfaye (KYC approved) has a login of her own, so the
// employee's routes — her dashboard, onboarding checklist, settings, help page, advances, loans and
// the deductions on her pay — can be tried as she sees them. The owner invites her by e-mail (POST
// /api/employees/<id>/invite) and she makes her account from the link the dev inbox holds (POST
// /api/employees/link/sign-up), as an employee would; so the part needs the dev inbox (with SMTP
// configured the link leaves the machine and this part is skipped).
const demoEmployeeKey = "kycApproved"

// employeeLogin brings the employee part to its complete state (nothing when it is).
func (s *demoSeed) employeeLogin(ctx context.Context) error {
	if s.d.EmployeeLoginComplete || s.env.DevInbox == "" {
		return nil
	}
	var e demoEmployee
	for _, x := range demoEmployees {
		if x.Key == demoEmployeeKey {
			e = x
		}
	}
	if s.d.EmployeeEmail == "" {
		s.d.EmployeeEmail, s.d.EmployeePassword = e.Email, randomToken()
		if err := s.save(); err != nil {
			return err
		}
	}
	_, err := identity.UserByEmail(ctx, s.app, s.d.EmployeeEmail)
	switch {
	case err == nil:
		if _, err := signedIn(ctx, s.env.APIURL, s.d.EmployeeEmail, s.d.EmployeePassword); err != nil {
			return fmt.Errorf("%s has an account the demo did not make (%v): sign in with its own password", s.d.EmployeeEmail, err)
		}
		s.d.EmployeeLoginComplete = true
		return s.save()
	case !errors.Is(err, identity.ErrNotFound):
		return err
	}
	owner, err := s.ownerClient(ctx)
	if err != nil {
		return err
	}
	if err := owner.call(ctx, http.MethodPost, "/api/employees/"+s.d.Employees[demoEmployeeKey]+"/invite",
		map[string]any{"channel": "email"}, http.StatusOK, nil); err != nil {
		return fmt.Errorf("invite %s %s: %w", e.First, e.Last, err)
	}
	token, err := s.inboxToken(s.d.EmployeeEmail, notify.Invitation)
	if err != nil {
		return fmt.Errorf("the employee's invitation: %w", err)
	}
	if err := newDemoClient(s.env.APIURL).call(ctx, http.MethodPost, "/api/employees/link/sign-up", map[string]any{
		"token": token, "password": s.d.EmployeePassword, "name": e.First + " " + e.Last}, http.StatusOK, nil); err != nil {
		return fmt.Errorf("the employee's account from the link: %w", err)
	}
	s.d.EmployeeLoginComplete = true
	return s.save()
}
